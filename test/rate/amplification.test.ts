// Retry amplification during a total outage, asserted on the very run the benchmark prints:
// bench/figures/amplification.mjs runs 1,000 operations with 3 attempts against a real
// node:http server that answers 503 to everything, without a budget and with each budget.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

interface Row {
  subject: string;
  requests: number;
  received: number;
  amplification: number;
  gaveUpForAttempts: number;
  gaveUpForBudget: number;
}

const run = () =>
  new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bench/figures/amplification.mjs')],
      { cwd: ROOT, timeout: 60_000 },
      (error, stdout, stderr) => (error ? reject(error) : resolve({ stdout, stderr })),
    );
  });

describe('retry amplification during a total outage (bench/figures/amplification.mjs)', () => {
  it('plain retries send 3×; tokenBudget (10 %) at most 1.2×; ratioBudget (20 %) at most 1.3×', async () => {
    const { stdout, stderr } = await run();
    const doc = JSON.parse(stdout) as { requests: number; maxAttempts: number; results: Row[] };
    expect(doc).toMatchObject({ requests: 1000, maxAttempts: 3 });
    const row = (subject: string) => doc.results.find((r) => r.subject === subject) as Row;

    const plain = row('plain retries');
    expect(plain.received).toBe(3000);
    expect(plain.amplification).toBe(3);
    expect(plain.gaveUpForAttempts).toBe(1000);

    const token = row('tokenBudget');
    expect(token.amplification).toBeLessThanOrEqual(1.2);
    expect(token.received).toBeGreaterThan(1000); // the first failures still retry
    expect(token.gaveUpForBudget).toBeGreaterThan(900);

    const ratio = row('ratioBudget');
    expect(ratio.amplification).toBeLessThanOrEqual(1.3);
    expect(ratio.received).toBeGreaterThan(1100); // 20 % and the reserve are used
    expect(ratio.gaveUpForBudget).toBeGreaterThan(0);

    const aws = row('awsRetryQuota');
    expect(aws.received).toBe(1035); // 500 tokens / 14 per transient retry
    // The human table goes to stderr, the JSON alone to stdout.
    expect(stderr).toMatch(/plain retries\s+3000\s+3\.000×/);
    expect(stdout.trim().split('\n')).toHaveLength(1);
  });
});
