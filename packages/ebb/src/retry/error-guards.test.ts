import fc from 'fast-check';
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

/**
 * Values a guard may be handed by user code, none of them ebb's error with `code`: primitives
 * (the code itself as a string among them), a revoked proxy, a proxy whose every trap throws,
 * getters that throw (the brand's, `code`'s, `name`'s), null-prototype objects, a function.
 */
function hostileValues(code: string): unknown[] {
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  const fail = (): never => {
    throw new Error('trap');
  };
  const trapping = new Proxy(
    {},
    { get: fail, has: fail, getPrototypeOf: fail, getOwnPropertyDescriptor: fail, ownKeys: fail },
  );
  const throwingOn = (key: PropertyKey): object => Object.defineProperty({}, key, { get: fail });
  return [
    undefined,
    null,
    0,
    -0,
    Number.NaN,
    1n,
    true,
    '',
    code,
    Symbol('x'),
    Symbol.for('ebb.error.code'),
    revoked,
    trapping,
    throwingOn('code'),
    throwingOn('name'),
    throwingOn(BRAND),
    // The code and name beside a brand that cannot be read: nothing says which copy made it.
    Object.defineProperty({ code }, BRAND, { get: fail }),
    Object.create(null),
    Object.create(revoked),
    () => {},
  ];
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
    for (const hostile of hostileValues(code)) expect(guard(hostile)).toBe(false);
  });

  it.each(GUARDS)(
    '%s: a null-prototype object is judged by its own brand, or code and name, never by a class',
    (_, guard, name, code) => {
      // The brand is read as a property, not through a class: a null-prototype object that
      // carries the code and name (as a copy older than the brand would) or the brand is
      // recognised; one carrying another brand, or the code alone, is not.
      expect(guard(Object.assign(Object.create(null), { code, name }))).toBe(true);
      expect(guard(Object.assign(Object.create(null), { [BRAND]: code }))).toBe(true);
      expect(guard(Object.assign(Object.create(null), { [BRAND]: 'EBB_OTHER', code, name }))).toBe(false);
      expect(guard(Object.assign(Object.create(null), { code }))).toBe(false);
    },
  );

  it.each(GUARDS)(
    '%s: any generated value (null-prototype objects, getters that throw) gets false, never a throw',
    (_, guard) => {
      const withThrowingGetters = fc
        .tuple(fc.anything({ withNullPrototype: true }), fc.subarray(['code', 'name', BRAND, 'cause'] as PropertyKey[]))
        .map(([value, keys]) => {
          const target = typeof value === 'object' && value !== null ? value : {};
          for (const key of keys) {
            Object.defineProperty(target, key, {
              configurable: true,
              get() {
                throw new Error(`hostile ${String(key)}`);
              },
            });
          }
          return target;
        });
      fc.assert(
        fc.property(
          fc.oneof(fc.anything({ withNullPrototype: true, withBigInt: true }), withThrowingGetters),
          (value) => {
            expect(guard(value)).toBe(false);
          },
        ),
        { numRuns: 300 },
      );
    },
  );

  it.each(GUARDS)(
    '%s recognises an object made from the class prototype without its constructor, as instanceof does',
    (_, guard, _name, _code, own) => {
      // The guards read the brand, not instanceof: the brand's getter returns the code itself, not
      // a field the constructor sets.
      expect(guard(Object.create(Object.getPrototypeOf(own())))).toBe(true);
    },
  );

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
