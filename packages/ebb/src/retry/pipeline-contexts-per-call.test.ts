import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import type { AttemptContext } from './contexts.js';
import type { Mechanism } from './mechanism.js';
import { pipeline } from './pipeline.js';
import { retrying } from './retrying.js';
import { timeout } from './timeout.js';

/** A mechanism that hands the context it is given to the rest of the pipeline, and records it. */
const passing = (seen: AttemptContext[]): Mechanism => ({
  execute(next, context) {
    seen.push(context);
    return next(context);
  },
});

describe('pipeline: every call without a signal gets contexts of its own', () => {
  it('a first mechanism that hands its context on gets a new one each call: one call aborting it cannot reach another', async () => {
    const seen: AttemptContext[] = [];
    const api = pipeline([passing(seen)]);
    const got: AttemptContext[] = [];
    await api.execute((c) => got.push(c));
    await api.execute((c) => got.push(c));
    expect(seen[0]).not.toBe(seen[1]);
    expect(got[0]).not.toBe(got[1]);
    expect(got.map((c) => [c.attempt, c.elapsedMs])).toEqual([
      [1, 0],
      [1, 0],
    ]);
  });

  it.each<[string, () => Mechanism]>([
    ['retrying()', () => retrying()],
    ['timeout(ms)', () => timeout(1_000, { clock: virtualClock() })],
  ])(
    'behind a first %s the operation still gets a new context each call, whose signal is its own',
    async (_name, first) => {
      const got: AttemptContext[] = [];
      const api = pipeline([first()]);
      await api.execute((c) => got.push(c));
      await api.execute((c) => got.push(c));
      expect(got[0]).not.toBe(got[1]);
      expect(got[0]?.signal).not.toBe(got[1]?.signal);
      expect(got.map((c) => [c.attempt, c.signal.aborted])).toEqual([
        [1, false],
        [1, false],
      ]);
    },
  );

  it('behind a first retrying(), a mechanism that hands its context on still sees a new one each call', async () => {
    const seen: AttemptContext[] = [];
    const api = pipeline([retrying(), passing(seen)]);
    await api.execute(() => 1);
    await api.execute(() => 1);
    expect(seen[0]).not.toBe(seen[1]);
  });
});
