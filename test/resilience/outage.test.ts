// The circuit breaker under an outage, asserted on the very run the benchmark prints:
// bench/figures/resilience.mjs against a real node:http server on 127.0.0.1, with the outage
// shortened from the figure's 30 s to 5 s and the open period capped at 4 s (not 8 s) so that the
// test stays near 15 s. Open periods are 1 s doubling to 4 s with equal jitter: [0.5, 1) s,
// [1, 2) s, [2, 4) s, …, so a 5 s outage sees two to five of them and recovery needs at most 4 s
// of the 9 s after it.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

interface Row {
  subject: string;
  duringOutage: number;
  openings: number;
  firstPeriod: number | null;
  maxPerLaterPeriod: number | null;
  periodsMs: string;
  withinBackoff: boolean | null;
  recoveryMs: number | null;
  lastPeriodMs: number | null;
  recoveryPeriods: number | null;
  okPerSecondAfter: number;
}

const run = () =>
  new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [
        join(ROOT, 'bench/figures/resilience.mjs'),
        '--outage-ms=5000',
        '--after-ms=9000',
        '--max-open-ms=4000',
        '--subjects=ebb',
      ],
      { cwd: ROOT, timeout: 60_000 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });

describe('circuit breaker against a real server during an outage (bench/figures/resilience.mjs)', () => {
  it('lets at most one probe through per open period, grows periods by the backoff, and closes within two periods of recovery', async () => {
    const doc = JSON.parse(await run()) as { workers: number; results: Row[] };
    const [ebb] = doc.results as [Row];
    expect(ebb.subject).toBe('ebb');
    // Two or more openings in 5 s.
    expect(ebb.openings).toBeGreaterThanOrEqual(2);
    // The first period sees only calls admitted before the breaker opened (at most one a worker).
    expect(ebb.firstPeriod).toBeLessThanOrEqual(doc.workers);
    expect(ebb.maxPerLaterPeriod).toBe(1);
    expect(ebb.withinBackoff).toBe(true);
    expect(ebb.lastPeriodMs as number).toBeLessThan(4_000);
    const periods = ebb.periodsMs.split(' ').map(Number);
    expect(periods.length).toBe(ebb.openings);
    // The dead server saw the calls before the first opening, the in-flight ones, and one probe a period.
    expect(ebb.duringOutage).toBeLessThanOrEqual(2 * doc.workers + 5 + ebb.openings);
    expect(ebb.recoveryPeriods).not.toBeNull();
    expect(ebb.recoveryPeriods as number).toBeLessThanOrEqual(2);
    // Full traffic afterwards: 10 workers with 20 ms think time manage well over 100 calls a second
    // even on a loaded machine; a breaker stuck open would give 0.
    expect(ebb.okPerSecondAfter).toBeGreaterThan(50);
  }, 40_000);
});
