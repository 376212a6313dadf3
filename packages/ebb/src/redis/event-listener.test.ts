// Every shared structure's `onEvent` (sharedRate, the shared budgets, sharedAdaptiveThrottle,
// sharedCircuitBreaker) is checked by listenerOption and called by sendEvent: a listener that is
// not a function is refused naming the option; an event reaches it frozen; its throw stays there.
import { describe, expect, it } from 'vitest';
import { listenerOption, type SharedEvent, sendEvent } from './protocol.js';

const event = (): SharedEvent => ({ type: 'resync', error: undefined, atMs: 5 });

describe('listenerOption', () => {
  it('takes a function or undefined, and refuses anything else naming `onEvent`, its value and the shape expected', () => {
    const f = () => {};
    expect(listenerOption('sharedRate()', f)).toBe(f);
    expect(listenerOption('sharedRate()', undefined)).toBeUndefined();
    for (const bad of [null, 1, 'f', {}]) {
      expect(() => listenerOption('sharedRate()', bad)).toThrow(
        /sharedRate\(\).*`onEvent`.*a function \(event\) => void/,
      );
    }
  });
});

describe('sendEvent', () => {
  it('hands the listener the event frozen', () => {
    const seen: SharedEvent[] = [];
    sendEvent((e) => seen.push(e), event());
    expect(seen).toEqual([event()]);
    expect(Object.isFrozen(seen[0])).toBe(true);
  });

  it('a listener that throws: the throw goes no further (the structure is every request’s, the listener one caller’s)', () => {
    expect(() =>
      sendEvent(() => {
        throw new Error('listener bug');
      }, event()),
    ).not.toThrow();
  });
});
