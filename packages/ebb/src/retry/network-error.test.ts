import { describe, expect, it } from 'vitest';
import { defaultIsFailure } from './errors.js';
import { isNetworkError } from './network-error.js';

// The recognized shapes are specified in http/network-error.test.ts; these pin the edges of the walk.
const chain = (depth: number): Error => {
  // `depth` wrappers around an error that carries the code.
  let e: Error = Object.assign(new Error('socket'), { code: 'ECONNRESET' });
  for (let i = 0; i < depth; i++) e = new Error(`wrap ${i}`, { cause: e });
  return e;
};

describe('isNetworkError: the edges of the cause walk', () => {
  it('follows causes eight deep and no deeper', () => {
    expect(isNetworkError(chain(8))).toBe(true);
    expect(isNetworkError(chain(9))).toBe(false);
  });

  it('an AggregateError counts if any one of its errors does, not only the first', () => {
    const refused = Object.assign(new Error('b'), { code: 'ECONNREFUSED' });
    expect(isNetworkError(new AggregateError([new Error('a'), refused]))).toBe(true);
    expect(isNetworkError(new AggregateError([new Error('a'), new Error('c')]))).toBe(false);
    // The AggregateError's errors are counted in the depth too.
    const nested = new AggregateError([chain(7)]);
    expect(isNetworkError(nested)).toBe(true);
    expect(isNetworkError(new AggregateError([chain(8)]))).toBe(false);
  });

  it('an AggregateError that contains itself ends the walk instead of the stack', () => {
    const loop = new AggregateError([]) as AggregateError & { errors: unknown[] };
    loop.errors.push(loop);
    expect(isNetworkError(loop)).toBe(false);
  });

  it('a TypeError whose message is not a string is not a network error (and does not throw)', () => {
    const odd = new TypeError('x');
    Object.defineProperty(odd, 'message', { value: 42 });
    expect(isNetworkError(odd)).toBe(false);
  });

  it("Deno's message must start the error's message", () => {
    expect(isNetworkError(new TypeError('error sending request for url (http://x/)'))).toBe(true);
    expect(isNetworkError(new TypeError('retry: error sending request for url'))).toBe(false);
  });

  it("Deno's message since 1.46, once a connection was made (`from <address> for <url>`), is a network error too", () => {
    const message =
      'error sending request from 127.0.0.1:50472 for http://localhost:4444/ (127.0.0.1:4444): client error (SendRequest): connection error: Connection reset by peer (os error 54)';
    expect(isNetworkError(new TypeError(message))).toBe(true);
    expect(defaultIsFailure({ ok: false, error: new TypeError(message) })).toBe(true);
  });

  it("Node's `fetch failed` and `terminated` count by their cause's code, not by the message", () => {
    expect(isNetworkError(new TypeError('fetch failed', { cause: new Error('unknown scheme') }))).toBe(false);
    expect(isNetworkError(new TypeError('terminated'))).toBe(false);
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    expect(isNetworkError(new TypeError('terminated', { cause: reset }))).toBe(true);
  });

  it("a null cause, or a null among an AggregateError's errors, ends that branch of the walk (no throw)", () => {
    expect(isNetworkError(new TypeError('fetch failed', { cause: null }))).toBe(false);
    const refused = Object.assign(new Error('b'), { code: 'ECONNREFUSED' });
    expect(isNetworkError(new AggregateError([null, refused]))).toBe(true);
  });

  it('a hostile value anywhere in the walk (a throwing getter, a revoked proxy) reads as no code and never throws', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const throwing = (key: string) =>
      Object.defineProperty(new TypeError('fetch failed'), key, {
        get() {
          throw new Error(`${key} getter`);
        },
      });
    expect(isNetworkError(proxy)).toBe(false);
    expect(isNetworkError(new TypeError('fetch failed', { cause: proxy }))).toBe(false);
    expect(isNetworkError(new AggregateError([proxy]))).toBe(false);
    for (const key of ['code', 'errors', 'cause', 'message']) expect(isNetworkError(throwing(key))).toBe(false);
    // A throwing getter hides only its own field: the rest of the walk still counts.
    const reset = Object.assign(new Error('other side closed'), { code: 'ECONNRESET' });
    const hidden = Object.defineProperty(new TypeError('fetch failed', { cause: reset }), 'code', {
      get() {
        throw new Error('code getter');
      },
    });
    expect(isNetworkError(hidden)).toBe(true);
  });
});
