import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { HttpStatusError, isHttpStatusError } from '../http/status-error.js';
import { isLocalThrottleError, LocalThrottleError } from '../rate/adaptive-throttle.js';
import { isLimitExceededError, LimitExceededError } from '../resilience/concurrency-limit.js';
import { BrokenCircuitError, isBrokenCircuitError } from '../resilience/errors.js';
import { FinalError, isFinal, isRetryError, RetryError, stop } from './errors.js';
import { isNotDoneError, NotDoneError, poll } from './poll.js';
import { retry } from './retry.js';
import { retrySync } from './retry-sync.js';

const BRAND = Symbol.for('ebb.error.code');

/**
 * An error as another copy of ebb makes it: a different class (instanceof is false here) with
 * the same name, code and brand. `branded: false` is a copy older than the brand.
 */
function foreign(name: string, code: string, fields: Record<string, unknown> = {}, branded = true): Error {
  class Foreign extends Error {
    override readonly name = name;
    readonly code = code;
  }
  if (branded) Object.defineProperty(Foreign.prototype, BRAND, { get: () => code });
  return Object.assign(new Foreign(`${name} from another copy`), fields);
}

const GUARDS = [
  ['isRetryError', isRetryError, 'RetryError', 'EBB_RETRY_GAVE_UP', () => new RetryError('attempts', 1, 0, 'x', 'd')],
  ['isFinal', isFinal, 'FinalError', 'EBB_FINAL', () => stop(new Error('x'))],
  ['isNotDoneError', isNotDoneError, 'NotDoneError', 'EBB_NOT_DONE', () => new NotDoneError(1)],
  [
    'isBrokenCircuitError',
    isBrokenCircuitError,
    'BrokenCircuitError',
    'EBB_CIRCUIT_OPEN',
    () => new BrokenCircuitError('open', 5, 'd'),
  ],
  [
    'isLimitExceededError',
    isLimitExceededError,
    'LimitExceededError',
    'EBB_LIMIT_EXCEEDED',
    () => new LimitExceededError('wait', 1, 'd'),
  ],
  [
    'isLocalThrottleError',
    isLocalThrottleError,
    'LocalThrottleError',
    'EBB_LOCAL_THROTTLE',
    () => new LocalThrottleError(0.5),
  ],
  [
    'isHttpStatusError',
    isHttpStatusError,
    'HttpStatusError',
    'EBB_HTTP_STATUS',
    () => new HttpStatusError(new Response('busy', { status: 503 }), 'GET', 'http://127.0.0.1/x', undefined, false),
  ],
] as const;

describe('error guards: ebb errors recognised by their stable code, from any copy of ebb', () => {
  it.each(GUARDS)('%s: this copy, another branded copy, an older unbranded copy', (_, guard, name, code, own) => {
    const mine = own();
    expect(guard(mine)).toBe(true);
    expect((mine as unknown as Record<symbol, unknown>)[BRAND]).toBe(code);
    expect((mine as unknown as { code: string }).code).toBe(code);
    expect(guard(foreign(name, code))).toBe(true);
    expect(guard(foreign(name, code, {}, false))).toBe(true);
  });

  it.each(GUARDS)('%s: false for look-alikes and hostile values, never throwing', (_, guard, name, code) => {
    // Another ebb error's brand, a bare code without the name, the name without the code.
    expect(guard(foreign(name, 'EBB_SOMETHING_ELSE'))).toBe(false);
    expect(guard(Object.assign(new Error('x'), { code }))).toBe(false);
    expect(guard(Object.assign(new Error('x'), { name }))).toBe(false);
    // A branded object whose brand says another code wins over a matching code field.
    const liar = foreign('Other', 'EBB_OTHER', { code, name });
    expect(guard(liar)).toBe(false);
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const throwing = Object.defineProperty({}, 'code', {
      get() {
        throw new Error('getter');
      },
    });
    for (const hostile of [undefined, null, 0, Number.NaN, code, Symbol('x'), proxy, throwing, () => {}]) {
      expect(guard(hostile)).toBe(false);
    }
  });

  it('isRetryError and isFinal recognise an object made from the class prototype without its constructor, as instanceof does', () => {
    // The guards read the brand, not instanceof: the brand must not depend on fields the constructor sets.
    expect(isRetryError(Object.create(RetryError.prototype))).toBe(true);
    expect(isFinal(Object.create(FinalError.prototype))).toBe(true);
  });

  it('instanceof keeps working within one copy', () => {
    expect(stop(1)).toBeInstanceOf(FinalError);
    expect(new RetryError('budget', 2, 3, undefined, 'd')).toBeInstanceOf(RetryError);
  });

  it("retry(), retrySync() and poll() end at once on another copy's stop(error), rejecting with its error", async () => {
    const own = new Error('not found');
    const foreignStop = () => foreign('FinalError', 'EBB_FINAL', { cause: own });
    const backoff = constant({ delayMs: 0, maxAttempts: 5 });
    let calls = 0;
    await expect(
      retry(
        () => {
          calls++;
          throw foreignStop();
        },
        { backoff },
      ),
    ).rejects.toBe(own);
    expect(calls).toBe(1);
    calls = 0;
    expect(() =>
      retrySync(
        () => {
          calls++;
          throw foreignStop();
        },
        { backoff },
      ),
    ).toThrow(own);
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      poll(
        () => {
          calls++;
          throw foreignStop();
        },
        { backoff },
      ),
    ).rejects.toBe(own);
    expect(calls).toBe(1);
    // An unbranded copy's stop() too.
    await expect(
      retry(
        () => {
          throw foreign('FinalError', 'EBB_FINAL', { cause: own }, false);
        },
        { backoff },
      ),
    ).rejects.toBe(own);
  });
});
