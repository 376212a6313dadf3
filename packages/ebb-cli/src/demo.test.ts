import { describe as describeSchedule, presets } from 'ebb';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, type DemoSettings, demo, demoPolicies, demoSettings, peakWithin } from './demo.js';
import { UsageError } from './usage-error.js';

describe('demoPolicies', () => {
  it('with a 100 ms base, the jittered policy is presets.default itself; the other is the same curve without jitter', () => {
    const [plain, jittered] = demoPolicies(100);
    expect(jittered?.backoff).toBe(presets.default);
    const rows = describeSchedule(plain?.backoff as never, 5);
    expect(rows.rows.map((r) => [r.delayMs, r.minDelayMs, r.maxDelayMs])).toEqual([
      [100, 100, 100],
      [200, 200, 200],
      [400, 400, 400],
      [800, 800, 800],
    ]);
    expect(rows.stopsAfterAttempt).toBe(5);
    const def = describeSchedule(presets.default, 5);
    expect(def.rows.map((r) => r.delayMs)).toEqual(rows.rows.map((r) => r.delayMs));
  });

  it('with another base, both keep the default shape: ×2, 20 s cap, 5 attempts; only the jitter differs', () => {
    const [plain, jittered] = demoPolicies(500);
    const a = describeSchedule(plain?.backoff as never, 5);
    const b = describeSchedule(jittered?.backoff as never, 5);
    expect(a.rows.map((r) => r.maxDelayMs)).toEqual([500, 1000, 2000, 4000]);
    expect(b.rows.map((r) => [r.minDelayMs, r.maxDelayMs])).toEqual([
      [0, 500],
      [0, 1000],
      [0, 2000],
      [0, 4000],
    ]);
    expect(a.stopsAfterAttempt).toBe(5);
    expect(b.stopsAfterAttempt).toBe(5);
  });
});

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
    expect(demoSettings({ clients: '50', base: '100ms', seed: '7' })).toMatchObject({
      clients: 50,
      baseDelayMs: 100,
      seed: 7,
    });
    expect(demoSettings({ base: '1.5s' }).baseDelayMs).toBe(1500);
  });

  it('refuses what is not a number in range, with the flag named', () => {
    expect(() => demoSettings({ clients: '0' })).toThrow(UsageError);
    expect(() => demoSettings({ clients: '2.5' })).toThrow(
      '--clients expects a whole number from 1 to 5000, got "2.5"',
    );
    expect(() => demoSettings({ clients: 'many' })).toThrow('--clients expects a number');
    expect(() => demoSettings({ base: '10s' })).toThrow('--base expects a duration from 1ms to 5s, got "10s"');
    expect(() => demoSettings({ base: 'soon' })).toThrow(UsageError);
    expect(() => demoSettings({ seed: '1.5' })).toThrow('--seed expects a whole number, got "1.5"');
  });
});

describe('demo (a small, fast crowd against a real server on 127.0.0.1)', () => {
  const small: DemoSettings = { ...DEFAULT_SETTINGS, clients: 30, baseDelayMs: 5, workMs: 2, maxConcurrent: 4 };

  function recorder(isTTY: boolean) {
    let text = '';
    return {
      stream: {
        isTTY,
        write: (t: string) => {
          text += t;
          return true;
        },
      },
      text: () => text,
    };
  }

  it('runs both policies and prints a side-by-side summary; plain progress lines off a terminal', async () => {
    const out = recorder(false);
    const { stdout, runs } = await demo(small, false, out.stream);
    expect(runs.map((r) => r.name)).toEqual(['no-jitter', 'ebb-default']);
    for (const r of runs) {
      expect(r.clients).toBe(30);
      expect(r.served + r.gaveUp).toBe(30);
      expect(r.requests).toBeGreaterThanOrEqual(30);
      expect(r.requests).toBeLessThanOrEqual(30 * 5);
      expect(r.requestsPerSuccess).toBeCloseTo(r.requests / r.served, 10);
      expect(r.allServedMs === null).toBe(r.served < 30);
      expect(r.lastDoneMs).toBeGreaterThanOrEqual(r.allServedMs ?? 0);
    }
    const lines = stdout.split('\n');
    expect(lines[1]).toMatch(/^\s+no jitter\s+ebb default$/);
    for (const label of [
      'clients served',
      'clients who gave up',
      'requests sent',
      'requests per success',
      'answered 503 at once (shed)',
      'peak load: retries in 100 ms',
      'every client served after',
      'last client done after',
    ]) {
      expect(stdout).toContain(label);
    }
    expect(stdout).toContain(`${runs[0]?.served} of 30`);
    expect(out.text()).not.toContain('\r');
    expect(out.text()).toMatch(/^no jitter .* served +\d+\/30/m);
    expect(out.text()).toMatch(/^ebb default .* served +\d+\/30/m);
  });

  it('on a terminal, redraws one live line per run; --json prints one document', async () => {
    const out = recorder(true);
    const { stdout } = await demo(small, true, out.stream);
    expect(out.text()).toContain('\r\x1b[2K');
    const doc = JSON.parse(stdout);
    expect(Object.keys(doc)).toEqual(['clients', 'baseDelayMs', 'server', 'seed', 'peakWindowMs', 'runs']);
    expect(doc.server).toEqual({ maxConcurrent: 4, maxQueue: 12, workMs: 2, flakyRate: 0.05 });
    expect(doc.runs).toHaveLength(2);
    expect(Object.keys(doc.runs[0])).toEqual([
      'name',
      'policy',
      'clients',
      'served',
      'gaveUp',
      'requests',
      'requestsPerSuccess',
      'shed',
      'flaky',
      'peakRetries',
      'allServedMs',
      'lastDoneMs',
      'waveMs',
    ]);
  });
});
