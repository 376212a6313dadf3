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
import { seconds } from './demo-report.js';
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

/** A run's figures, consistent with one another: every request not a success was shed. */
function run(
  name: string,
  clients: number,
  served: number,
  requests: number,
  peakRetries: number,
  lastDoneMs = 1_500,
): RunSummary {
  return {
    name,
    policy: '',
    clients,
    served,
    gaveUp: clients - served,
    requests,
    requestsPerSuccess: served > 0 ? requests / served : null,
    shed: requests - served,
    flaky: 0,
    peakRetries,
    allServedMs: served === clients ? 1_000 : null,
    lastDoneMs,
  };
}

/** The demo's server: 4 requests at once, 20 ms each (200 a second). */
const SERVER = { maxConcurrent: 4, workMs: 20 } as const;

/** Every whole number written in `text`. */
const numbersIn = (text: string) => [...text.matchAll(/\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));

describe('verdict: the closing words, computed from the figures', () => {
  it('says lockstep kept failing and the same retries fit, quoting the figures, when jitter served everyone', () => {
    const v = verdict(run('no-jitter', 200, 60, 881, 188), run('ebb-default', 200, 200, 813, 36), SERVER);
    expect([v.jitterHelps, v.jitterFits]).toEqual([true, true]);
    expect(v.lines).toEqual([
      'In lockstep, the crowd kept failing: retries came back together (up to 188 in 10 ms, against 36 with jitter),',
      'met a full server, and 140 of 200 clients gave up after 881 requests.',
      'With jitter, the same retries fit: all 200 served (140 more), at 4.07 requests per success instead of 14.68.',
    ]);
  });

  it('a crowd larger than the server can serve in time: jitter got more through, and the words say why not all', () => {
    // 2000 clients, 1.5 s of trying: 4 at once × 20 ms = at most 300 requests completed.
    const v = verdict(run('no-jitter', 2000, 60, 9881, 1988), run('ebb-default', 2000, 276, 9807, 315), SERVER);
    expect([v.jitterHelps, v.jitterFits, v.serverRoom]).toEqual([true, false, 300]);
    expect(v.lines).toEqual([
      'In lockstep, the crowd kept failing: retries came back together (up to 1988 in 10 ms, against 315 with jitter),',
      'met a full server, and 1940 of 2000 clients gave up after 9881 requests.',
      'With jitter, more got through: 276 of 2000 served (216 more), at 35.53 requests per success instead of 164.68;',
      'yet 1724 still gave up: the server could complete at most 300 requests in the 1.5 s the crowd kept trying (4 at once, 20 ms each),',
      'fewer than the 2000 clients. Jitter spreads retries out but adds no capacity: fewer clients need less,',
      'and a policy that keeps trying for longer gives the server more time.',
    ]);
    expect(v.lines.join(' ')).not.toMatch(/fit/);
  });

  it('a crowd the server had room for, not all served: no claim about capacity, the room quoted', () => {
    const v = verdict(run('no-jitter', 200, 60, 881, 188), run('ebb-default', 200, 181, 813, 36, 1_234), SERVER);
    expect([v.jitterHelps, v.jitterFits, v.serverRoom]).toEqual([true, false, 246]);
    expect(v.lines.slice(2)).toEqual([
      'With jitter, more got through: 181 of 200 served (121 more), at 4.49 requests per success instead of 14.68;',
      'yet 19 still gave up, though the server could complete 246 requests in the 1.23 s the crowd kept trying (4 at once, 20 ms each):',
      'some retries still met a full server.',
    ]);
  });

  it('retries no more bunched in lockstep, or nothing shed: the words drop what the figures do not show', () => {
    const plain = { ...run('no-jitter', 200, 60, 881, 20), shed: 0, flaky: 821 };
    const v = verdict(plain, run('ebb-default', 200, 200, 813, 36), SERVER);
    expect(v.lines.slice(0, 2)).toEqual([
      'In lockstep, the crowd kept failing: up to 20 retries came in 10 ms,',
      'and 140 of 200 clients gave up after 881 requests.',
    ]);
  });

  it.each([
    [
      'jitter served fewer',
      run('no-jitter', 200, 150, 500, 100),
      run('ebb-default', 200, 120, 600, 20),
      /jitter served 120, lockstep 150/,
    ],
    ['a tie', run('no-jitter', 50, 40, 100, 30), run('ebb-default', 50, 40, 90, 5), /jitter served 40, lockstep 40/],
    [
      'jitter paid more per success',
      run('no-jitter', 50, 30, 90, 30),
      run('ebb-default', 50, 40, 200, 5),
      /jitter took 5\.00 requests per success, lockstep 3\.00/,
    ],
    [
      'nobody served',
      run('no-jitter', 50, 0, 250, 49),
      run('ebb-default', 50, 0, 250, 9),
      /jitter served 0, lockstep 0/,
    ],
  ])('does not claim what the figures contradict: %s', (_, plain, jittered, reason) => {
    const v = verdict(plain, jittered, SERVER);
    expect([v.jitterHelps, v.jitterFits]).toEqual([false, false]);
    expect(v.lines.join(' ')).toMatch(/^These figures do not show jitter helping: /);
    expect(v.lines.join(' ')).toMatch(reason);
    expect(v.lines.join(' ')).not.toMatch(/fit:|kept failing|got through/);
  });

  it.each([
    [
      run('no-jitter', 50, 50, 60, 10),
      run('ebb-default', 50, 50, 55, 5),
      'Lockstep served all 50 clients too, as jitter did:',
    ],
    [run('no-jitter', 1, 1, 1, 0), run('ebb-default', 1, 1, 1, 0), 'Lockstep served all 1 client too, as jitter did:'],
    [
      run('no-jitter', 50, 50, 60, 10),
      run('ebb-default', 50, 49, 55, 5),
      'Lockstep served all 50 clients too; jitter served 49:',
    ],
  ])(
    'lockstep lost no one: the server had room, and the words say so rather than compare',
    (plain, jittered, start) => {
      const v = verdict(plain, jittered, SERVER);
      expect([v.jitterHelps, v.jitterFits]).toEqual([false, false]);
      expect(v.lines).toEqual([
        `${start} this server had room for the crowd, so these figures cannot show jitter helping.`,
        'Try more clients (--clients).',
      ]);
    },
  );

  it('for any figures: claims jitter helps exactly when it served more, cheaper, and lockstep lost someone; fits only when it served all; quotes only figures', () => {
    const figures = fc
      .record({
        clients: fc.integer({ min: 1, max: 5_000 }),
        a: fc.nat(),
        b: fc.nat(),
        ra: fc.nat(),
        rb: fc.nat(),
        doneMs: fc.integer({ min: 1, max: 60_000 }),
        maxConcurrent: fc.integer({ min: 1, max: 64 }),
        workMs: fc.integer({ min: 1, max: 500 }),
      })
      .map(({ clients, a, b, ra, rb, doneMs, maxConcurrent, workMs }) => {
        const servedA = a % (clients + 1);
        const servedB = b % (clients + 1);
        return [
          run('no-jitter', clients, servedA, clients + (ra % (4 * clients + 1)), ra % (clients + 1)),
          run('ebb-default', clients, servedB, clients + (rb % (4 * clients + 1)), rb % (clients + 1), doneMs),
          { maxConcurrent, workMs },
        ] as const;
      });
    fc.assert(
      fc.property(figures, ([p, j, server]) => {
        const v = verdict(p, j, server);
        const rps = (r: RunSummary) => r.requestsPerSuccess ?? Infinity;
        const helps = j.served > p.served && rps(j) < rps(p) && p.gaveUp > 0;
        expect(v.jitterHelps).toBe(helps);
        expect(v.jitterFits).toBe(helps && j.gaveUp === 0);
        const text = v.lines.join(' ');
        expect(/the same retries fit/.test(text)).toBe(v.jitterFits);
        expect(/still gave up/.test(text)).toBe(helps && j.gaveUp > 0);
        // "adds no capacity" only when the crowd outnumbers what the server could complete.
        expect(/adds no capacity/.test(text)).toBe(helps && j.gaveUp > 0 && v.serverRoom < j.clients);
        expect(v.serverRoom).toBeGreaterThanOrEqual(Math.floor((server.maxConcurrent * j.lastDoneMs) / server.workMs));
        const allowed = new Set<number>([10, server.maxConcurrent, server.workMs, v.serverRoom]);
        for (const n of numbersIn(seconds(j.lastDoneMs))) allowed.add(n);
        for (const r of [p, j]) {
          for (const x of [r.clients, r.served, r.gaveUp, r.requests, r.peakRetries, j.served - p.served])
            allowed.add(x);
          if (r.requestsPerSuccess !== null) allowed.add(Number(r.requestsPerSuccess.toFixed(2)));
        }
        for (const n of numbersIn(text)) expect(allowed, `${n} in ${text}`).toContain(n);
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
    const v = verdict(plain, jittered, small);
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
