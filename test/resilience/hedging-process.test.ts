// Hedging's one timer and a real Node.js process: while a hedge is pending the timer holds the
// process open (the hedge must run), and once every call has settled it does not (a script ends
// when its work does, not when a hedging delay long past its last call runs out).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `source` as an ES module in a fresh node from the repository root; its stdout and wall time. */
function runNode(source: string): Promise<{ stdout: string; ms: number }> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', source],
      { cwd: root, timeout: 30_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`));
        else resolve({ stdout, ms: performance.now() - t });
      },
    );
  });
}

describe('hedging in a real process', () => {
  it('a settled call leaves nothing holding the process: it exits long before the 20-s hedging delay', async () => {
    const { stdout, ms } = await runNode(`
      import { hedging } from 'ebb/resilience';
      const h = hedging({ delayMs: 20_000 });
      for (let i = 0; i < 3; i++) await h.run(async () => i);
      console.log(JSON.stringify(h.stats));
    `);
    expect(JSON.parse(stdout)).toEqual({ calls: 3, hedges: 0 });
    // Node's own start-up on a busy machine is a few seconds at worst; the delay is 20.
    expect(ms).toBeLessThan(12_000);
  }, 40_000);

  it('a pending hedge holds the process until it runs, even when nothing else does', async () => {
    // The first attempt never settles and holds nothing open; only the hedge timer keeps the
    // process alive until the hedge starts and wins.
    const { stdout } = await runNode(`
      import { hedging } from 'ebb/resilience';
      const h = hedging({ delayMs: 300, budget: { tryAcquireRetry: () => true, recordSuccess() {} } });
      let n = 0;
      const value = await h.run(() => (n++ === 0 ? new Promise(() => {}) : 'hedge'));
      console.log(JSON.stringify({ value, ...h.stats }));
    `);
    expect(JSON.parse(stdout)).toEqual({ value: 'hedge', calls: 1, hedges: 1 });
  }, 40_000);

  it('a budget that throws at the hedge fails only that call: the process goes on and exits normally', async () => {
    // The throw comes from inside hedging's host timer callback; it must reach the call, not the host.
    const { stdout } = await runNode(`
      import { hedging } from 'ebb/resilience';
      const h = hedging({ delayMs: 50, budget: { tryAcquireRetry() { throw new Error('budget bug'); }, recordSuccess() {} } });
      const failed = await h.run(() => new Promise((r) => setTimeout(() => r('late'), 300))).catch((e) => e.message);
      const other = await h.run(async () => 'other');
      console.log(JSON.stringify({ failed, other }));
    `);
    expect(JSON.parse(stdout)).toEqual({ failed: 'budget bug', other: 'other' });
  }, 40_000);
});
