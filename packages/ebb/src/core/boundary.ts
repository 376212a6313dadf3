import type { Clock } from './clock.js';
import { DEV } from './dev.js';
import { show } from './validate.js';

/**
 * The boundary rule's small helpers (docs/structure.md, "User code at the boundary"): what a
 * user's function returns is checked where it enters, and nothing it throws escapes into a host
 * callback. They hold no state and read no clock; each mechanism calls them at the points where
 * it calls user code. @internal
 */

/**
 * Reads `value[key]` from a value that came from user code: a throwing getter or a revoked
 * proxy reads as undefined instead of throwing out of the executor. @internal
 */
export function prop(value: unknown, key: PropertyKey): unknown {
  try {
    // A primitive reads through its wrapper: none of ebb's keys is found there.
    return value == null ? undefined : (value as Record<PropertyKey, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** `value instanceof C`, false where that throws (a revoked proxy). @internal */
export function isA(value: unknown, C: abstract new (...args: never[]) => unknown): boolean {
  try {
    return value instanceof C;
  } catch {
    return false;
  }
}

/**
 * A thrown value as text for a message, without ever throwing: `Name: message` when both are
 * strings, else `String(value)`, else its message, else (a null-prototype object, a throwing
 * `toString`, a revoked proxy) a description of its type. Symbols print as `Symbol(description)`. @internal
 */
export function describeThrown(value: unknown): string {
  const name = prop(value, 'name');
  const message = prop(value, 'message');
  if (typeof name === 'string' && typeof message === 'string') return `${name}: ${message}`;
  try {
    return String(value);
  } catch {
    return typeof message === 'string' ? message : `an unprintable ${typeof value}`;
  }
}

/**
 * The brand every error class of ebb carries (a getter on its prototype, whose value is the
 * class's stable `code`): a `Symbol.for` symbol, the same in every copy of ebb loaded in one
 * process — an ESM and a CommonJS build side by side, or two versions in one dependency tree —
 * where `instanceof` sees two unrelated classes. @internal
 */
export const EBB_ERROR: unique symbol = Symbol.for('ebb.error.code');

/**
 * Whether `value` is ebb's error with the stable `code` (class name `name`), from this copy of
 * ebb or any other: the brand's code; else — an error made by a copy of ebb older than the brand
 * — its `code` and `name` together. This copy's errors carry the brand too (a getter on the
 * class's prototype that returns the code as a literal, so an object made from the prototype
 * without the constructor is recognised, as `instanceof` would), so a guard need not name the
 * class, and a bundle that only tests for an error does not carry it. Never throws: a revoked
 * proxy or a throwing getter is simply not ebb's error. @internal
 */
export function isBranded(value: unknown, code: string, name: string): boolean {
  const brand = prop(value, EBB_ERROR);
  return brand !== undefined ? brand === code : prop(value, 'code') === code && prop(value, 'name') === name;
}

/**
 * Whether `error` is a refusal by one of ebb's own mechanisms, from any copy of ebb: a full
 * concurrency limit or bulkhead (`'EBB_LIMIT_EXCEEDED'`), an open breaker (`'EBB_CIRCUIT_OPEN'`)
 * or `adaptiveThrottle()`'s local rejection (`'EBB_LOCAL_THROTTLE'`), known by its code so that a
 * mechanism that only recognises one does not carry its class. The request never left the
 * process: a breaker counts it for nothing, a retry budget charges nothing for retrying it. @internal
 */
export function isLocalRefusal(error: unknown): boolean {
  const code = prop(error, 'code');
  return code === 'EBB_LIMIT_EXCEEDED' || code === 'EBB_CIRCUIT_OPEN' || code === 'EBB_LOCAL_THROTTLE';
}

/**
 * A predicate's answer, checked: `true` or `false`, else a `TypeError` naming the predicate and
 * the value (a string `'false'`, `NaN`, `undefined` or a promise where a boolean is expected
 * would otherwise be read by its truthiness, silently).
 *
 * @example
 * predicate('concurrencyLimit()', 'isDrop', isDrop(error)); // TypeError: … `isDrop` returned "yes"; expected true or false.
 */
export function predicate(where: string, name: string, value: unknown, expected?: string): boolean {
  if (value === true || value === false) return value;
  // `describe()` marks a refused promise (an async predicate where a sync one is expected) handled.
  throw new TypeError(
    DEV
      ? `${where}: \`${name}\` returned ${describe(value)}; expected ${expected ?? 'true or false'}.`
      : `${where}: \`${name}\` ${describe(value)}`,
  );
}

/**
 * A failure predicate's answer (`isFailure`), checked: `true`, `false` or `'throttled'` (a failure
 * that says "slow down"), else a `TypeError` naming it, as {@link predicate} does.
 *
 * @example
 * verdict('retry()', 'isFailure', isFailure(outcome, context)); // TypeError: … `isFailure` returned "no"; expected true, false or 'throttled'.
 */
export function verdict(where: string, name: string, value: unknown): boolean | 'throttled' {
  return value === 'throttled' ? value : predicate(where, name, value, DEV ? "true, false or 'throttled'" : '');
}

const noop = (): void => {};

/** Marks a user's promise as handled: a rejection nobody will read must not reach the host. */
export function handled(value: PromiseLike<unknown>): void {
  try {
    value.then(undefined, noop);
  } catch {
    // A thenable whose then throws has nothing to reject.
  }
}

/**
 * A user function's answer that nobody reads (a budget's `recordRequest`, a hook whose value is
 * ignored): a promise's rejection is marked handled, so that an `async` function reaches no host.
 */
export function ignored(value: unknown): void {
  if (isThenable(value)) handled(value);
}

/**
 * A user value in a refusal's message: as {@link show} renders it, a thenable named as a promise —
 * and that promise marked handled: refused, it may still reject, and its rejection is the
 * refusal's business now, not an unhandled one that would reach the host.
 */
export function describe(value: unknown): string {
  if (!isThenable(value)) return show(value);
  handled(value);
  return 'a promise';
}

/** True for anything with a callable `then`: promises of any realm and other thenables. */
export function isThenable<T = unknown>(value: unknown): value is PromiseLike<T> {
  // A revoked proxy or a throwing `then` getter (read by `prop`) is no promise ebb can wait for.
  return (typeof value === 'object' || typeof value === 'function') && typeof prop(value, 'then') === 'function';
}

/**
 * `clock.now()`, checked: a finite number, else a `RangeError` (`NaN`, `±Infinity`) or a
 * `TypeError` (anything but a number) naming the clock. The executor and every mechanism read
 * their clock this way before they change any state, so a clock that returns `NaN`, `undefined`
 * or a string fails the call that read it and leaves the shared state as it was (NaN in a window,
 * a rate or a deadline would poison every later call). A throw throws through, to the same caller.
 */
export function readNow(clock: Pick<Clock, 'now'>): number {
  const t: unknown = clock.now();
  if (typeof t === 'number' && t - t === 0) return t;
  throw new (typeof t === 'number' ? RangeError : TypeError)(
    DEV
      ? `clock.now() returned ${describe(t)}; expected a finite number of milliseconds.`
      : `clock.now() ${describe(t)}`,
  );
}

/**
 * `clock.sleep(ms, signal)`, checked: the promise it returns, or a `TypeError` naming the clock
 * when it returns anything else. A sleep that throws throws through, to the caller that asked.
 */
export function sleepOn(clock: Clock, ms: number, signal: AbortSignal | undefined): PromiseLike<void> {
  const slept: unknown = clock.sleep(ms, signal);
  if (!isThenable<void>(slept)) {
    throw new TypeError(
      DEV ? `clock.sleep() returned ${describe(slept)}; expected a promise.` : `clock.sleep() ${describe(slept)}`,
    );
  }
  return slept;
}
