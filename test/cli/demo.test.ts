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
  verdict: { jitterHelps: boolean; jitterFits: boolean; serverRoom: number; lines: string[] };
}

/** The rows of the side-by-side table: [no jitter, ebb default] of each. */
function tableOf(stdout: string) {
  const row = (label: string): [string, string] => {
    const m = new RegExp(`^${label} +(\\S+(?: of \\d+| s| ms)?) +(\\S+(?: of \\d+| s| ms)?)$`, 'm').exec(stdout);
    expect(m, `${label} in\n${stdout}`).not.toBeNull();
    return [m?.[1] as string, m?.[2] as string];
  };
  const int = (pair: [string, string]) => pair.map((x) => Number.parseInt(x, 10)) as [number, number];
  const secondsOf = (x: string) => (x.endsWith(' ms') ? Number.parseFloat(x) / 1_000 : Number.parseFloat(x));
  return {
    served: int(row('clients served')),
    gaveUp: int(row('clients who gave up')),
    requests: int(row('requests sent')),
    perSuccess: row('requests per success'),
    lastDoneSeconds: row('last client done after').map(secondsOf) as [number, number],
  };
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
    expect([doc.verdict.jitterHelps, doc.verdict.jitterFits]).toEqual([true, true]);
    expect(jittered.gaveUp).toBe(0);
    expect(doc.verdict.lines.join(' ')).toContain(`${plain.gaveUp} of 100 clients gave up`);
    expect(doc.verdict.lines.join(' ')).toContain(`all ${jittered.served} served`);
    // Virtual time: a second run, whatever the machine is doing meanwhile, prints the same document.
    const b = await ebb(['demo', '--json'], { timeoutMs: 60_000 });
    expect(b.stdout).toBe(a.stdout);
    expect(a.stderr).toMatch(/^100 clients fail at the same moment/);
    expect(a.stderr).toMatch(/^ebb default +served \d+\/100 over/m);
  });

  it('prints the side-by-side table, and closing words that quote its own rows', async () => {
    const r = await ebb(['demo', '--clients', '100']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\s+no jitter\s+ebb default$/m);
    const rows = tableOf(r.stdout);
    const [servedPlain, servedJitter] = rows.served;
    expect(r.stdout).toContain(`${rows.gaveUp[0]} of 100 clients gave up after ${rows.requests[0]} requests.`);
    expect(r.stdout).toContain(
      `the same retries fit: all 100 served (${servedJitter - servedPlain} more), at ${rows.perSuccess[1]} requests per success instead of ${rows.perSuccess[0]}.`,
    );
    // The policy named in the words the library uses for it: the demo restates none of its numbers.
    const sentence = /^Both crowds run ebb's default policy \((.*)\); one without its (\w+ jitter)\.$/m.exec(r.stdout);
    expect(sentence, r.stdout).not.toBeNull();
    const [, limits, jitter] = sentence as RegExpExecArray;
    expect([...String(limits).split(', '), jitter].sort()).toEqual(defaultPhrases().sort());
  });

  it('at any crowd size the closing words follow the rows: "fit" only when jitter served all, "still gave up" with the count, "no capacity" only past what the server could complete', {
    timeout: 180_000,
  }, async () => {
    const kinds = new Set<string>();
    for (const clients of [1, 12, 100, 300, 2000]) {
      const r = await ebb(['demo', '--clients', String(clients)], { timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(0);
      const rows = tableOf(r.stdout);
      const words = r.stdout.slice(r.stdout.indexOf("Both crowds run ebb's default"));
      const server = /handles (\d+) requests at once \((\d+) ms each\)/.exec(r.stderr);
      expect(server, r.stderr).not.toBeNull();
      const [atOnce, workMs] = [Number(server?.[1]), Number(server?.[2])];
      const [servedPlain, servedJitter] = rows.served;
      const [gaveUpPlain, gaveUpJitter] = rows.gaveUp;
      const [rpsPlain, rpsJitter] = rows.perSuccess.map(Number) as [number, number];
      const helps = servedJitter > servedPlain && rpsJitter < rpsPlain && gaveUpPlain > 0;
      const context = `--clients ${clients}:\n${r.stdout}`;
      expect(/the same retries fit/.test(words), context).toBe(helps && gaveUpJitter === 0);
      expect(/still gave up/.test(words), context).toBe(helps && gaveUpJitter > 0);
      if (gaveUpPlain === 0) {
        expect(words, context).toMatch(/^Lockstep served all \d+ clients? too/m);
        kinds.add('room');
      } else if (helps && gaveUpJitter === 0) kinds.add('fit');
      else if (helps) {
        expect(words, context).toContain(`more got through: ${servedJitter} of ${clients} served`);
        expect(words, context).toContain(`yet ${gaveUpJitter} still gave up`);
        // The room the words quote is the product of the figures beside it.
        const room = /could complete (?:at most )?(\d+) requests in the ([\d.]+) s the crowd kept trying/.exec(words);
        expect(room, context).not.toBeNull();
        expect(Number(room?.[2])).toBe(rows.lastDoneSeconds[1]);
        expect(Number(room?.[1])).toBe(Math.floor((atOnce * Number(room?.[2]) * 1_000) / workMs));
        expect(Number(room?.[1])).toBeGreaterThanOrEqual(servedJitter);
        expect(/adds no capacity/.test(words), context).toBe(Number(room?.[1]) < clients);
        kinds.add(Number(room?.[1]) < clients ? 'no capacity' : 'room, not all');
      }
    }
    // The sizes reach each kind of ending: the server had room; jitter fit; jitter helped but the crowd outgrew the server.
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['fit', 'no capacity', 'room']));
  });

  it('a bad flag exits 2 with one line on stderr', async () => {
    const r = await ebb(['demo', '--clients', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('ebb: --clients expects a whole number from 1 to 2000, got "0"\n');
    expect(r.stdout).toBe('');
  });
});
