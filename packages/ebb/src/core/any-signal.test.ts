import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { anySignal } from './any-signal.js';

describe('anySignal: both signals at once', () => {
  it('aborts with the reason of the first source to abort, and then leaves neither source a listener', () => {
    for (const abortsFirst of ['a', 'b'] as const) {
      const a = new AbortController();
      const b = new AbortController();
      const [first, second] = abortsFirst === 'a' ? [a, b] : [b, a];
      const both = anySignal(a.signal, b.signal);
      expect(both.aborted).toBe(false);
      first.abort(`reason ${abortsFirst}`);
      expect(both.aborted).toBe(true);
      expect(both.reason).toBe(`reason ${abortsFirst}`);
      second.abort('late');
      expect(both.reason).toBe(`reason ${abortsFirst}`);
      for (const s of [a, b]) expect(getEventListeners(s.signal, 'abort')).toHaveLength(0);
    }
  });

  it('a source already aborted: aborted at once with its reason, no listener added', () => {
    const live = new AbortController();
    const both = anySignal(live.signal, AbortSignal.abort('gone'));
    expect([both.aborted, both.reason]).toEqual([true, 'gone']);
    expect(getEventListeners(live.signal, 'abort')).toHaveLength(0);
    const first = anySignal(AbortSignal.abort('one'), AbortSignal.abort('two'));
    expect(first.reason).toBe('one');
  });

  it('while neither aborts, each source holds one listener for it (taken off when it is collected)', () => {
    const a = new AbortController();
    const b = new AbortController();
    const both = anySignal(a.signal, b.signal);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1);
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(1);
    expect(both.aborted).toBe(false);
  });

  it('held alone — its controller held by nobody else, as when a response keeps it for its body — it still aborts after collections', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const a = new AbortController();
    const both = anySignal(a.signal, new AbortController().signal);
    for (let i = 0; i < 5; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    a.abort('late');
    expect([both.aborted, both.reason]).toEqual([true, 'late']);
  });
});
