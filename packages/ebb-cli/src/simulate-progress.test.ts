import { describe, expect, it } from 'vitest';
import { planned } from './simulate-common.js';
import { progressBar, timeLeftMs, timeLeftWords } from './simulate-progress.js';

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { stream: { isTTY, columns: 80, write: (t: string) => writes.push(t) }, writes };
}

/** The share and the words of the last frame drawn. */
const lastFrame = (writes: string[]) => {
  const m = /\] (\d+)% · (.*)$/.exec(writes.filter((w) => w.includes('[')).at(-1) ?? '');
  return m ? [Number(m[1]), m[2]] : undefined;
};

describe('progressBar', () => {
  it('stays silent for the first second, then draws at most ten times a second, and erases itself', () => {
    let now = 0;
    const { stream, writes } = fakeStream(true);
    const bar = progressBar(stream, 'wifi', () => now);
    bar.update(10, 100);
    now = 999;
    bar.update(20, 100);
    expect(writes).toEqual([]);
    now = 1_000;
    bar.update(50, 100);
    now = 1_050;
    bar.update(60, 100);
    expect(writes).toHaveLength(1);
    expect(writes[0]?.startsWith('\r\x1b[2K')).toBe(true);
    expect(writes[0]?.slice('\r\x1b[2K'.length)).toMatch(/^wifi \[#+\.+\] 50% · about 1 s left$/);
    now = 1_200;
    bar.update(100, 100);
    expect(writes[1]).toMatch(/\] 100% · under a second left$/);
    bar.finish();
    expect(writes.at(-1)).toBe('\r\x1b[2K');
  });

  it('shows the time left at the pace so far: a quarter done in 20 s leaves about a minute', () => {
    let now = 0;
    const { stream, writes } = fakeStream(true);
    const bar = progressBar(stream, 'overload', () => now);
    now = 20_000;
    bar.update(250, 1_000);
    expect(lastFrame(writes)).toEqual([25, 'about 1 min left']);
    now = 40_000;
    bar.update(500, 1_000);
    expect(lastFrame(writes)).toEqual([50, 'about 40 s left']);
  });

  it('draws nothing when stderr is not a terminal, however long the run', () => {
    let now = 0;
    const { stream, writes } = fakeStream(false);
    const bar = progressBar(stream, 'x', () => now);
    now = 60_000;
    bar.update(1, 2);
    bar.finish();
    expect(writes).toEqual([]);
  });
});

describe('timeLeftMs and timeLeftWords', () => {
  it('elapsed × (1 − share) ÷ share, once 1 % is done; nothing to say before', () => {
    expect(timeLeftMs(10_000, 0.5)).toBe(10_000);
    expect(timeLeftMs(3_000, 0.25)).toBe(9_000);
    expect(timeLeftMs(5_000, 1)).toBe(0);
    expect(timeLeftMs(5_000, 0.009)).toBeUndefined();
    expect(timeLeftMs(0, 0.5)).toBeUndefined();
    expect(timeLeftMs(5_000, Number.NaN)).toBeUndefined();
  });

  it('words with the precision a reader can use', () => {
    expect(timeLeftWords(undefined)).toBe('estimating the time left');
    expect(timeLeftWords(400)).toBe('under a second left');
    expect(timeLeftWords(8_400)).toBe('about 8 s left');
    expect(timeLeftWords(80_000)).toBe('about 1 min 20 s left');
    expect(timeLeftWords(123_000)).toBe('about 2 min left');
    expect(timeLeftWords(12 * 60_000 + 30_000)).toBe('about 12 min left');
  });
});

describe('planned: one bar over several simulator runs, each weighted by its estimated work', () => {
  it('a run estimated at three times the work moves the bar three times as far', () => {
    let now = 0;
    const { stream, writes } = fakeStream(true);
    const io = { out: () => {}, progress: stream };
    const plan = { model: 'overload', parts: [1_000, 3_000], smaller: 'fewer --clients' } as const;
    planned(
      io,
      plan,
      (part) => {
        now = 2_000;
        part(0)(1_000, 1_000); // the first run, done: a quarter of the work
        expect(lastFrame(writes)?.[0]).toBe(25);
        now = 4_000;
        part(1)(1_500, 3_000); // half of the second: 25 + 37.5 %
        expect(lastFrame(writes)?.[0]).toBe(62);
        now = 6_000;
        // A run that sends more than estimated reports its total raised to what it did: capped at its share.
        part(1)(4_000, 4_000);
        expect(lastFrame(writes)?.[0]).toBe(100);
      },
      () => now,
    );
    expect(writes.at(-1)).toBe('\r\x1b[2K');
  });

  it('warns on stderr before a long run, terminal or not, and says nothing before a short one', () => {
    for (const isTTY of [true, false]) {
      const { stream, writes } = fakeStream(isTTY);
      const io = { out: () => {}, progress: stream };
      let ran = false;
      planned(io, { model: 'overload', parts: [5_000_000], smaller: 'fewer --clients' }, () => {
        // The warning is out before the run starts.
        expect(writes).toEqual([
          'ebb: this run will take about 2 min (about 5 million simulated requests); fewer --clients make it shorter, Ctrl-C stops it\n',
        ]);
        ran = true;
      });
      expect(ran).toBe(true);
      const quiet = fakeStream(isTTY);
      planned({ out: () => {}, progress: quiet.stream }, { model: 'overload', parts: [1_000], smaller: '' }, () => {});
      expect(quiet.writes).toEqual([]);
    }
  });

  it('erases the bar when the runs throw, and passes the error on', async () => {
    let now = 0;
    const { stream, writes } = fakeStream(true);
    const io = { out: () => {}, progress: stream };
    const plan = { model: 'delays', parts: [1], smaller: '' } as const;
    expect(() =>
      planned(
        io,
        plan,
        (part) => {
          now = 2_000;
          part(0)(1, 2);
          throw new RangeError('bad');
        },
        () => now,
      ),
    ).toThrow('bad');
    expect(writes.at(-1)).toBe('\r\x1b[2K');
    await expect(
      planned(
        io,
        plan,
        async (part) => {
          now = 4_000;
          part(0)(1, 2);
          throw new RangeError('async bad');
        },
        () => now,
      ),
    ).rejects.toThrow('async bad');
    expect(writes.at(-1)).toBe('\r\x1b[2K');
  });
});
