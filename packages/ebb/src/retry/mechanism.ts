import { DEV } from '../core/dev.js';
import { brief, show } from '../core/validate.js';
import type { AttemptContext } from './contexts.js';

/**
 * One mechanism of a {@link pipeline}: it runs the rest of the pipeline (`next`) around one call
 * — once (a timeout, a fallback, a guard), several times (a retry), or not at all (a breaker that
 * is open) — and returns a promise of the value. `next` runs everything inside it with the
 * context it is given: the mechanism's own `context`, or one it made (a retry makes one per
 * attempt, a timeout one whose signal it aborts). `next` never throws: it returns a rejected
 * promise instead.
 *
 * A mechanism is an object, made once and shared by every call of its pipeline, so it may keep
 * state across calls (a breaker's window, a budget).
 *
 * @example
 * // Logs each call's duration.
 * const timing: Mechanism = {
 *   async execute(next, context) {
 *     const t = performance.now();
 *     try { return await next(context); } finally { console.log(performance.now() - t); }
 *   },
 * };
 */
export interface Mechanism {
  execute<T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T>;
}

/**
 * `m` itself when it is a mechanism (an object with `execute`), else a `TypeError` naming the
 * place (`where`, `name`) and the value. A guard of the `acquire`/`record` shape is no mechanism:
 * the message says to wrap it, `guard(m)`, which a bundle then carries only when a program calls
 * it. @internal
 */
export function mechanismAt(where: string, name: string, m: unknown): Mechanism {
  if (typeof (m as Mechanism | null)?.execute === 'function') return m as Mechanism;
  throw new TypeError(
    DEV
      ? `${where}: expected \`${name}\` to be a mechanism { execute(next, context) }, got ${show(m)}.${
          typeof (m as { acquire?: unknown } | null)?.acquire === 'function'
            ? " It is a guard { acquire(), record() }: wrap it, `guard(x)` (import { guard } from 'ebb')."
            : ''
        }`
      : brief(where, name, m),
  );
}

/** The mechanisms `retrying()` made: refused where another retry runs them (`use`). @internal */
export const RETRIES: WeakSet<Mechanism> = /* @__PURE__ */ new WeakSet();

/**
 * `use[i]` of `withRetry` and the client adapters, checked: a mechanism, and no retry — `use`
 * runs inside their own retry, where a second one multiplies the attempts. @internal
 */
export function innerAt(where: string, name: string, m: unknown): Mechanism {
  const mechanism = mechanismAt(where, name, m);
  if (RETRIES.has(mechanism)) {
    throw new TypeError(
      DEV
        ? `${where}: \`${name}\` is a retrying(): \`use\` runs inside ${where}'s own retry, where a second one multiplies the attempts. Give its options to ${where} instead.`
        : brief(where, name, m),
    );
  }
  return mechanism;
}

/**
 * Mechanisms that never hand the context they are given to `next` (they make their own: a retry
 * one per attempt, a timeout a child): the pipeline gives such a first mechanism a shared root
 * context instead of making one per call, since nothing inside can read or watch it. @internal
 */
export const SEALED: WeakSet<Mechanism> = /* @__PURE__ */ new WeakSet();

/** A judged mechanism of ebb's (judged-guard.ts), known to a pipeline by its `execute` ({@link JUDGED}). @internal */
export interface JudgedEntry {
  /** What it judges and counts with (a `Judged` of judged-guard.ts). */
  readonly spec: unknown;
  /** Runs it and, right inside it, the judged mechanism of `inner` (another entry's spec) around `next`, as one. */
  pairWith<T>(inner: unknown, next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T>;
}

/**
 * ebb's judged mechanisms (the breaker, the concurrency limit, the bulkhead) by their `execute`:
 * a pipeline runs two of them in a row with one reaction on the call's promise. Kept here so that
 * a pipeline carries the pairing code only in a bundle that has a judged mechanism. @internal
 */
export const JUDGED: WeakMap<Mechanism['execute'], JudgedEntry> = /* @__PURE__ */ new WeakMap();
