import { defaultBackoff, describeRow, findPreset } from 'ebb';
import { describe, expect, it } from 'vitest';
import { ebb } from '../support/cli.js';

/** The library's own one-line summary of its default (written from its values): "100 ms ×2", "20 s cap", … */
const defaultPhrases = () =>
  String(findPreset('default')?.title)
    .replace(/^ebb's default: /, '')
    .split(', ');

interface Run {
  name: string;
  clients: number;
  served: number;
  gaveUp: number;
  requests: number;
  requestsPerSuccess: number | null;
  shed: number;
  flaky: number;
  peakRetries: number;
  allServedMs: number | null;
  lastDoneMs: number;
}

interface Doc {
  clients: number;
  baseDelayMs: number;
  seed: number;
  runs: Run[];
  verdict: { jitterFits: boolean; lines: string[] };
}

describe('ebb demo, as a process', () => {
  it("the README command: ebb's real default, the same figures twice, and a verdict that agrees with them", async () => {
    const a = await ebb(['demo', '--json'], { timeoutMs: 60_000 });
    expect(a.code, a.stderr).toBe(0);
    const doc = JSON.parse(a.stdout) as Doc;
    expect(doc.clients).toBe(100);
    // presets.default, not a slowed-down copy
    expect(doc.baseDelayMs).toBe(describeRow(defaultBackoff, 1).delayMs);
    const [plain, jittered] = doc.runs as [Run, Run];
    expect([plain.name, jittered.name]).toEqual(['no-jitter', 'ebb-default']);
    for (const run of doc.runs) {
      expect(run.served + run.gaveUp).toBe(100);
      expect(run.requests).toBe(run.served + run.flaky + run.shed);
      expect(run.requests).toBeLessThanOrEqual(100 * defaultBackoff.maxAttempts);
    }
    // The claim, on the figures: lockstep keeps failing, jitter fits the same retries.
    expect(plain.gaveUp).toBeGreaterThan(0);
    expect(jittered.served).toBeGreaterThan(plain.served);
    expect(jittered.requestsPerSuccess as number).toBeLessThan(plain.requestsPerSuccess as number);
    expect(doc.verdict.jitterFits).toBe(true);
    expect(doc.verdict.lines.join(' ')).toContain(`${plain.gaveUp} of 100 clients gave up`);
    expect(doc.verdict.lines.join(' ')).toContain(`${jittered.served} of 100 served`);
    // Virtual time: a second run, whatever the machine is doing meanwhile, prints the same document.
    const b = await ebb(['demo', '--json'], { timeoutMs: 60_000 });
    expect(b.stdout).toBe(a.stdout);
    expect(a.stderr).toMatch(/^100 clients fail at the same moment/);
    expect(a.stderr).toMatch(/^ebb default +served \d+\/100 over/m);
  });

  it('prints the side-by-side table, and closing words that quote its own rows', async () => {
    const r = await ebb(['demo', '--clients', '150']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\s+no jitter\s+ebb default$/m);
    const row = (label: string) => {
      const m = new RegExp(`^${label} +(\\S+(?: of \\d+)?) +(\\S+(?: of \\d+)?)$`, 'm').exec(r.stdout);
      expect(m, label).not.toBeNull();
      return [m?.[1] as string, m?.[2] as string];
    };
    const [servedPlain, servedJitter] = row('clients served');
    const [gaveUpPlain] = row('clients who gave up');
    const [requestsPlain] = row('requests sent');
    const [rpsPlain, rpsJitter] = row('requests per success');
    expect(r.stdout).toContain(`${gaveUpPlain} of 150 clients gave up after ${requestsPlain} requests.`);
    expect(r.stdout).toContain(
      `the same retries fit: ${servedJitter} served (${Number.parseInt(servedJitter as string, 10) - Number.parseInt(servedPlain as string, 10)} more), at ${rpsJitter} requests per success instead of ${rpsPlain}.`,
    );
    // The policy named in the words the library uses for it: the demo restates none of its numbers.
    const sentence = /^Both crowds run ebb's default policy \((.*)\); one without its (\w+ jitter)\.$/m.exec(r.stdout);
    expect(sentence, r.stdout).not.toBeNull();
    const [, limits, jitter] = sentence as RegExpExecArray;
    expect([...String(limits).split(', '), jitter].sort()).toEqual(defaultPhrases().sort());
  });

  it('a bad flag exits 2 with one line on stderr', async () => {
    const r = await ebb(['demo', '--clients', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('ebb: --clients expects a whole number from 1 to 2000, got "0"\n');
    expect(r.stdout).toBe('');
  });
});
