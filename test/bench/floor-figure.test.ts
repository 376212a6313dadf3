// bench/figures/floor.mjs prints the floor of the typical import ask by ask. Its figures are
// sizes, which depend on the code, so this checks what must hold whatever the sizes: every ask
// changes the bundle (a flag the build ignored would weigh 0), the cumulative column adds up,
// the contracts grow with what they carry, and ebb and p-retry were measured in the same run.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

interface Size {
  production: number;
  development: number;
}
interface Figure {
  floor: Size;
  asks: { flag: string; alone: Size; added: Size; cumulative: Size }[];
  contracts: { label: string; flags: string[]; size: Size }[];
  ebb: { typical: Size; policy: Size; executor: Size };
  pRetry: number;
}

const run = () =>
  new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bench/figures/floor.mjs'), '--json'],
      { cwd: join(ROOT, 'bench'), timeout: 60_000 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });

describe('the floor of the typical import, ask by ask (bench/figures/floor.mjs)', () => {
  it('weighs every ask, adds them up, and measures ebb and p-retry beside them', async () => {
    const doc = JSON.parse(await run()) as Figure;
    const builds = ['production', 'development'] as const;
    let previous = doc.floor;
    for (const ask of doc.asks) {
      for (const b of builds) {
        expect(ask.alone[b], `${ask.flag} alone, ${b}`).toBeGreaterThan(0);
        expect(ask.cumulative[b] - previous[b], `${ask.flag} added, ${b}`).toBe(ask.added[b]);
      }
      previous = ask.cumulative;
    }
    // Full messages weigh more than short ones in every row.
    for (const row of [doc.floor, ...doc.asks.map((a) => a.cumulative)])
      expect(row.development).toBeGreaterThan(row.production);
    const [a, aAsync, aGuard, b, c, d] = doc.contracts.map((x) => x.size.production) as number[];
    expect(a).toBeGreaterThan(doc.floor.production);
    expect(aAsync).toBeLessThan(a as number);
    expect(aGuard).toBeGreaterThan(a as number);
    expect(b).toBeGreaterThan(a as number);
    expect(c).toBeGreaterThan(b as number);
    expect(d).toBeGreaterThan(c as number);
    expect(d).toBe(previous.production); // contract D is every ask
    expect(doc.ebb.typical.production).toBeGreaterThan(doc.ebb.executor.production);
    expect(doc.ebb.typical.development).toBeGreaterThan(doc.ebb.typical.production);
    expect(doc.pRetry).toBeGreaterThan(1_000);
  });
});
