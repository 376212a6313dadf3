import { describe, expect, it } from 'vitest';
import { ebb, ebbOnTerminal, ebbUntil } from '../support/cli.js';

const WARNING =
  /^ebb: this run will take about (\d+) (s|min) \(about ([\d.,]+(?: million| billion)?) ([a-z -]+?)(?:, most of it ([^)]+))?\); (.+) make it shorter, Ctrl-C stops it$/m;

describe('ebb simulate warns before a run that will take long', () => {
  it.each([
    // The crowd outlasts the outage: requests grow with the square of the clients.
    [['overload', '--clients', '50000'], 'simulated requests', 'fewer --clients', undefined],
    // Without backoff every write meets the whole crowd.
    [['contention', '--clients', '3000'], 'simulated writes', 'fewer --clients or --runs', 'none at 3000 clients'],
    [
      ['contention', '--clients', '1500', '--strategies', 'none'],
      'simulated writes',
      'fewer --clients or --runs',
      undefined,
    ],
    [['ethernet', '--stations', '30000'], 'station-slots', 'fewer --slots or --stations', undefined],
    [['brownout', '--duration', '1h'], 'simulated calls', 'a shorter --duration or less --load', undefined],
    [['delays', '--runs', '1e8'], 'draws', 'fewer --runs', undefined],
  ])(
    'ebb simulate %j: one line on stderr before any result, naming the size and what makes it shorter',
    async (args, unit, smaller, most) => {
      const r = await ebbUntil(['simulate', ...args, '--json'], /Ctrl-C stops it\n/, 60_000);
      expect(r.stopped, r.stderr).toBe(true);
      expect(r.stdout).toBe('');
      const m = WARNING.exec(r.stderr);
      expect(m, r.stderr).not.toBeNull();
      const [, n, per, , words, heaviest, flags] = m as RegExpExecArray;
      expect(Number(n) * (per === 'min' ? 60 : 1)).toBeGreaterThan(10);
      expect(words).toBe(unit);
      expect(flags).toBe(smaller);
      expect(heaviest).toBe(most);
      // Before the run: the line comes in the time the estimate takes, not the run's minutes.
      expect(r.afterMs).toBeLessThan(15_000);
    },
  );

  it('no warning before the runs the README shows, which take seconds', async () => {
    for (const args of [['overload'], ['contention'], ['contention', '--clients', '400'], ['ethernet'], ['outage']]) {
      const r = await ebb(['simulate', ...args, '--json'], { timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr, args.join(' ')).toBe('');
    }
  });
});

describe('on a terminal, the progress bar measures work done and says how long is left', { timeout: 180_000 }, () => {
  /** Every frame the bar drew: [share in %, the words after it]. */
  const frames = (screen: string, label: string) =>
    [
      ...screen.matchAll(new RegExp(`${label} \\[[#.]+\\] (\\d+)% · ([a-z0-9 ]+ left|estimating the time left)`, 'g')),
    ].map((m) => [Number(m[1]), m[2] as string] as const);
  const secondsLeft = (words: string) => {
    const m = /about (?:(\d+) min)? ?(?:(\d+) s)? left/.exec(words);
    return m ? Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0) : words.startsWith('under') ? 0 : undefined;
  };

  it('overload: the share follows the requests simulated (simulated time would sit under a quarter of the 10-minute horizon), and the time left shrinks', async () => {
    const r = await ebbOnTerminal(['simulate', 'overload', '--clients', '12000', '--strategies', 'full']);
    expect(r.code, r.stdout).toBe(0);
    const drawn = frames(r.stdout, 'overload');
    expect(drawn.length, r.stdout.slice(0, 2_000)).toBeGreaterThanOrEqual(5);
    const shares = drawn.map(([share]) => share);
    expect(shares).toEqual([...shares].sort((a, b) => a - b));
    // The run ends 2–3 simulated minutes in: by simulated time the bar would stop near 20 %.
    expect(Math.max(...shares)).toBeGreaterThanOrEqual(70);
    const left = drawn.map(([, words]) => secondsLeft(words)).filter((s) => s !== undefined);
    expect(left.length).toBeGreaterThanOrEqual(3);
    expect(left.at(-1) as number).toBeLessThan(left[0] as number);
    // The bar is erased before the table is printed.
    const erase = '\r\x1b[2K';
    expect(r.stdout.lastIndexOf(erase)).toBeGreaterThan(r.stdout.lastIndexOf('% · '));
    expect(r.stdout.lastIndexOf(erase)).toBeLessThan(r.stdout.indexOf('overload — 12000 clients'));
  });

  it('contention: runs weighed by their writes, so the bar does not wait on the none strategy at the end', async () => {
    const r = await ebbOnTerminal([
      'simulate',
      'contention',
      '--clients',
      '700',
      '--strategies',
      'full,none',
      '--runs',
      '60',
    ]);
    expect(r.code, r.stdout).toBe(0);
    const drawn = frames(r.stdout, 'contention');
    expect(drawn.length, r.stdout.slice(0, 2_000)).toBeGreaterThanOrEqual(5);
    // Weighed by runs, the cheap full-jitter runs would be the first half of the bar; weighed by
    // writes they are a few per cent, and the bar is drawn across the none runs.
    const shares = drawn.map(([share]) => share);
    expect(Math.min(...shares)).toBeLessThan(50);
    expect(Math.max(...shares)).toBeGreaterThanOrEqual(70);
  });
});
