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

  it('while neither aborts, each source holds one listener for it', () => {
    const a = new AbortController();
    const b = new AbortController();
    const both = anySignal(a.signal, b.signal);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1);
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(1);
    expect(both.aborted).toBe(false);
  });

  it('a source shared by 50 live combined signals holds one listener, and its abort reaches all 50 with its reason', () => {
    const shared = new AbortController();
    const others = Array.from({ length: 50 }, () => new AbortController());
    const combined = others.map((other) => anySignal(shared.signal, other.signal));
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    for (const other of others) expect(getEventListeners(other.signal, 'abort')).toHaveLength(1);
    const reason = new Error('shutting down');
    shared.abort(reason);
    expect(combined.filter((signal) => signal.aborted && signal.reason === reason)).toHaveLength(50);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    for (const other of others) expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  });

  it('a combined signal aborted by its other source leaves the shared source; the last one to go takes the listener off', () => {
    const shared = new AbortController();
    const first = new AbortController();
    const second = new AbortController();
    const one = anySignal(shared.signal, first.signal);
    const two = anySignal(second.signal, shared.signal);
    first.abort('first');
    expect([one.aborted, one.reason, two.aborted]).toEqual([true, 'first', false]);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    second.abort('second');
    expect([two.aborted, two.reason]).toEqual([true, 'second']);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    // A later abort of the shared source reaches neither: each keeps its first reason.
    shared.abort('late');
    expect([one.reason, two.reason]).toEqual(['first', 'second']);
  });

  it('combined signals that nobody holds any more are collected, and the shared source loses its listener', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const shared = new AbortController();
    const kept = new AbortController();
    for (let i = 0; i < 50; i++) anySignal(shared.signal, kept.signal);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    // Finalizers run after a collection, on a later turn of the event loop: at most 100 rounds.
    for (let i = 0; i < 100 && getEventListeners(shared.signal, 'abort').length > 0; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(kept.signal, 'abort')).toHaveLength(0);
  });

  it('a source used twice in one call holds one listener, and its abort reaches the combined signal', () => {
    const a = new AbortController();
    const both = anySignal(a.signal, a.signal);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1);
    a.abort('once');
    expect([both.aborted, both.reason]).toEqual([true, 'once']);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
  });

  it('50 combined signals on one source raise no MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const listen = (warning: Error): void => {
      warnings.push(warning.name);
    };
    process.on('warning', listen);
    try {
      const shared = new AbortController();
      for (let i = 0; i < 50; i++) anySignal(shared.signal, new AbortController().signal);
      // Node.js emits its warnings on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((name) => name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', listen);
    }
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
