import { defaultBackoff } from 'ebb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SETTINGS,
  type DemoSettings,
  demo,
  demoSettings,
  peakWithin,
  type RunSummary,
  verdict,
} from './demo.js';
import { UsageError } from './usage-error.js';

describe('peakWithin', () => {
  it('counts the most times within any window, whatever their order', () => {
    expect(peakWithin([], 100)).toBe(0);
    expect(peakWithin([0, 50, 99, 100, 150, 500], 100)).toBe(3); // 0, 50, 99 — 100 starts a new window
    expect(peakWithin([500, 100, 150, 199, 0], 100)).toBe(3);
    expect(peakWithin([1, 1, 1, 1], 1)).toBe(4);
  });
});

describe('demoSettings', () => {
  it('defaults, and reads --clients, --base and --seed', () => {
    expect(demoSettings({})).toEqual(DEFAULT_SETTINGS);
    expect(demoSettings({ clients: '50', base: '250ms', seed: '7' })).toMatchObject({
      clients: 50,
      baseDelayMs: 250,
      seed: 7,
    });
    expect(demoSettings({ base: '1.5s' }).baseDelayMs).toBe(1500);
  });

  it('refuses what is not a number in range, with the flag named', () => {
    expect(() => demoSettings({ clients: '0' })).toThrow(UsageError);
    expect(() => demoSettings({ clients: '2.5' })).toThrow(
      '--clients expects a whole number from 1 to 2000, got "2.5"',
    );
    expect(() => demoSettings({ clients: 'many' })).toThrow('--clients expects a number');
    expect(() => demoSettings({ base: '10s' })).toThrow('--base expects a duration from 1ms to 5s, got "10s"');
    expect(() => demoSettings({ base: 'soon' })).toThrow(UsageError);
    expect(() => demoSettings({ seed: '1.5' })).toThrow('--seed expects a whole number, got "1.5"');
  });
});

/** A run's figures, consistent with one another. */
function run(name: string, clients: number, served: number, requests: number, peakRetries: number): RunSummary {
  return {
    name,
    policy: '',
    clients,
    served,
    gaveUp: clients - served,
    requests,
    requestsPerSuccess: served > 0 ? requests / served : null,
    shed: 0,
    flaky: 0,
    peakRetries,
    allServedMs: served === clients ? 1_000 : null,
    lastDoneMs: 1_500,
  };
}

/** Every whole number written in `text`. */
const numbersIn = (text: string) => [...text.matchAll(/\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));

describe('verdict: the closing words, computed from the figures', () => {
  it('says lockstep kept failing and jitter fit, quoting the figures, when they show it', () => {
    const v = verdict(run('no-jitter', 200, 60, 881, 188), run('ebb-default', 200, 181, 813, 36));
    expect(v.jitterFits).toBe(true);
    expect(v.lines).toEqual([
      'In lockstep, the crowd kept failing: retries came back together (up to 188 in 10 ms, against 36 with jitter),',
      'met a full server, and 140 of 200 clients gave up after 881 requests.',
      'With jitter, the same retries fit: 181 of 200 served (121 more), at 4.49 requests per success instead of 14.68.',
    ]);
  });

  it.each([
    [
      'jitter served fewer',
      run('no-jitter', 200, 150, 500, 100),
      run('ebb-default', 200, 120, 600, 20),
      /jitter served 120 clients, lockstep 150/,
    ],
    [
      'a tie',
      run('no-jitter', 50, 40, 100, 30),
      run('ebb-default', 50, 40, 90, 5),
      /jitter served 40 clients, lockstep 40/,
    ],
    [
      'jitter paid more per success',
      run('no-jitter', 50, 30, 90, 30),
      run('ebb-default', 50, 40, 200, 5),
      /jitter took 5\.00 requests per success, lockstep 3\.00/,
    ],
    [
      'lockstep lost no one',
      run('no-jitter', 50, 50, 60, 10),
      run('ebb-default', 50, 50, 55, 5),
      /every lockstep client was served/,
    ],
    [
      'nobody served',
      run('no-jitter', 50, 0, 250, 49),
      run('ebb-default', 50, 0, 250, 9),
      /jitter served 0 clients, lockstep 0/,
    ],
  ])('does not claim what the figures contradict: %s', (_, plain, jittered, reason) => {
    const v = verdict(plain, jittered);
    expect(v.jitterFits).toBe(false);
    expect(v.lines.join(' ')).toMatch(/^These figures do not show jitter helping: /);
    expect(v.lines.join(' ')).toMatch(reason);
    expect(v.lines.join(' ')).not.toMatch(/fit:|kept failing/);
  });

  it('for any figures: claims jitter fits exactly when it served more, cheaper, and lockstep lost someone; quotes only figures', () => {
    const figures = fc
      .record({ clients: fc.integer({ min: 1, max: 5_000 }), a: fc.nat(), b: fc.nat(), ra: fc.nat(), rb: fc.nat() })
      .map(({ clients, a, b, ra, rb }) => {
        const servedA = a % (clients + 1);
        const servedB = b % (clients + 1);
        return [
          run('no-jitter', clients, servedA, clients + (ra % (4 * clients + 1)), ra % (clients + 1)),
          run('ebb-default', clients, servedB, clients + (rb % (4 * clients + 1)), rb % (clients + 1)),
        ] as const;
      });
    fc.assert(
      fc.property(figures, ([p, j]) => {
        const v = verdict(p, j);
        const rps = (r: RunSummary) => r.requestsPerSuccess ?? Infinity;
        expect(v.jitterFits).toBe(j.served > p.served && rps(j) < rps(p) && p.gaveUp > 0);
        const allowed = new Set<number>([10]);
        for (const r of [p, j]) {
          for (const x of [r.clients, r.served, r.gaveUp, r.requests, r.peakRetries, j.served - p.served])
            allowed.add(x);
          if (r.requestsPerSuccess !== null) allowed.add(Number(r.requestsPerSuccess.toFixed(2)));
        }
        for (const n of numbersIn(v.lines.join(' '))) expect(allowed, `${n} in ${v.lines.join(' ')}`).toContain(n);
      }),
      { numRuns: 2_000 },
    );
  });
});

// Real sockets: a busy machine makes these slower (never different), so they get time.
describe('demo (a small crowd against a real server on 127.0.0.1, in virtual time)', { timeout: 60_000 }, () => {
  const small: DemoSettings = { ...DEFAULT_SETTINGS, clients: 40 };
  const sink = () => {
    let text = '';
    return { stream: { write: (t: string) => (text += t) }, text: () => text };
  };

  it('runs both policies; the figures add up; the printed verdict is the one computed from them', async () => {
    const out = sink();
    const { stdout, runs } = await demo(small, false, out.stream);
    const [plain, jittered] = runs as [RunSummary, RunSummary];
    expect(runs.map((r) => r.name)).toEqual(['no-jitter', 'ebb-default']);
    for (const r of runs) {
      expect(r.served + r.gaveUp).toBe(40);
      expect(r.requests).toBeGreaterThanOrEqual(40);
      expect(r.requests).toBeLessThanOrEqual(40 * defaultBackoff.maxAttempts);
      // Every request was answered once: a 200 (one per served client), a flaky 500, or shed.
      expect(r.requests).toBe(r.served + r.flaky + r.shed);
      expect(r.allServedMs === null).toBe(r.served < 40);
    }
    // In lockstep, each wave of the crowd meets 4 slots and 8 places in the queue: 12 answered a wave.
    expect(plain.peakRetries).toBeGreaterThanOrEqual(40 - 12);
    const v = verdict(plain, jittered);
    for (const line of v.lines) expect(stdout).toContain(line);
    expect(stdout).toContain(`${plain.served} of 40`);
    expect(out.text()).toMatch(/^no jitter +served \d+\/40 over/m);
  });

  it('the same seed gives the same figures when the event loop is starved of CPU or requests leave late', async () => {
    const quiet = await demo(small, true, sink().stream);
    // Burn 3 ms of CPU every millisecond, as a loaded machine would steal it.
    const hog = setInterval(() => {
      const until = performance.now() + 3;
      while (performance.now() < until) {}
    }, 1);
    let busy: Awaited<ReturnType<typeof demo>>;
    try {
      busy = await demo(small, true, sink().stream);
    } finally {
      clearInterval(hog);
    }
    expect(busy.stdout).toBe(quiet.stdout);
    // Requests that leave after random real delays (a busy machine, a slow scheduler): same figures.
    const jittery: typeof fetch = (input, init) =>
      new Promise((resolve) => setTimeout(resolve, Math.random() * 4)).then(() => fetch(input, init));
    const delayed = await demo(small, true, sink().stream, jittery);
    expect(delayed.stdout).toBe(quiet.stdout);
    const other = await demo({ ...small, seed: small.seed + 1 }, true, sink().stream);
    expect(other.runs[1]).not.toEqual(quiet.runs[1]); // the seed matters: the figures are not fixed
  });
});
