import { describe, expect, it } from 'vitest';
import { ebb } from '../support/cli.js';

interface Run {
  name: string;
  clients: number;
  served: number;
  gaveUp: number;
  requests: number;
  requestsPerSuccess: number | null;
  peakRetries: number;
  allServedMs: number | null;
  lastDoneMs: number;
}

describe('ebb demo, as a process', () => {
  it('the README command: no setup, exits 0 within a minute, one JSON document on stdout, progress on stderr', async () => {
    const started = performance.now();
    const r = await ebb(['demo', '--json'], { timeoutMs: 60_000 });
    const elapsed = performance.now() - started;
    expect(r.code, r.stderr).toBe(0);
    expect(elapsed).toBeLessThan(60_000);
    const doc = JSON.parse(r.stdout) as { clients: number; baseDelayMs: number; runs: Run[] };
    expect(doc.clients).toBe(300);
    expect(doc.baseDelayMs).toBe(500);
    const [plain, jittered] = doc.runs as [Run, Run];
    expect([plain.name, jittered.name]).toEqual(['no-jitter', 'ebb-default']);
    for (const run of doc.runs) {
      expect(run.served + run.gaveUp).toBe(300);
      expect(run.requests).toBeGreaterThanOrEqual(300);
      expect(run.requests).toBeLessThanOrEqual(1500); // 5 attempts at most
    }
    // The point of the demo: with the same curve and limits, jitter serves at least as many
    // clients. (Measured margins on the 2-core CI machine: 227–268 against 300 served.)
    expect(jittered.served).toBeGreaterThanOrEqual(plain.served);
    // Not a terminal: plain progress lines, no carriage returns.
    expect(r.stderr).toMatch(/^300 clients fail at the same moment/);
    expect(r.stderr).not.toContain('\r');
    expect(r.stderr).toMatch(/^ebb default .* served +\d+\/300/m);
  });

  it('prints the side-by-side table in text mode', async () => {
    const r = await ebb(['demo', '--clients', '40', '--base', '20ms']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\s+no jitter\s+ebb default$/m);
    expect(r.stdout).toMatch(/^clients served\s+\d+ of 40\s+\d+ of 40$/m);
    expect(r.stdout).toMatch(/^requests per success\s+\d+\.\d\d\s+\d+\.\d\d$/m);
    expect(r.stdout).toContain(
      "Both run ebb's default policy (×2, 20 s cap, 5 attempts, full jitter) from a first wait of 20 ms\ninstead of 100 ms; one of them without the jitter.",
    );
  });

  it('a bad flag exits 2 with one line on stderr', async () => {
    const r = await ebb(['demo', '--clients', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('ebb: --clients expects a whole number from 1 to 5000, got "0"\n');
    expect(r.stdout).toBe('');
  });
});
