import { handled, isThenable, verdict } from '../core/boundary.js';
import { Attempt } from './attempt.js';
import type { AttemptContext } from './contexts.js';
import { type FailureVerdict, isFinal } from './errors.js';
import type { AbortSource } from './execution.js';
import { JUDGED, type Mechanism } from './mechanism.js';
import type { IsFailure, Outcome } from './options.js';
import { sourceOf } from './scope.js';

/**
 * What a mechanism that holds a ticket per call and judges the call's outcome itself (the
 * breaker, the concurrency limit and the bulkhead, the rate controllers) tells the adapter that
 * runs it in a pipeline. @internal
 */
export interface Judged<K> {
  /** Names the mechanism in a message about its `isFailure`'s answer: `circuitBreaker()`. */
  readonly where: string;
  /** The user's `isFailure`, if any; without one, {@link Judged.judge} answers. */
  // biome-ignore lint/suspicious/noExplicitAny: one mechanism judges calls of every value type
  readonly isFailure: IsFailure<any, any> | undefined;
  /** The mechanism's default verdict on an outcome (never a promise, never a throw). */
  judge(ok: boolean, detail: unknown): FailureVerdict;
  /**
   * Admits the call: its ticket, or a promise of it (a wait); a throw or rejection is a refusal.
   * `abortable`: something can abort the call, and `context.signal` may be read to wait on (read
   * it only to wait: making a signal costs about 2 µs).
   */
  acquire(context: AttemptContext, abortable: boolean): K | PromiseLike<K>;
  /** Hands back a ticket whose call gave no outcome to count (aborted, or its verdict failed). */
  release(ticket: K): void;
  /** Counts the verdict on the call's outcome and frees what the ticket holds, whatever it throws. */
  settle(ticket: K, verdict: FailureVerdict, ok: boolean, detail: unknown): void;
  /**
   * The verdict is a promise: frees what the ticket holds now (whatever it throws), and returns
   * how to count the verdict when it comes. Nothing the mechanism shares waits for user code.
   */
  end(ticket: K, ok: boolean, detail: unknown): (verdict: FailureVerdict) => void;
}

/**
 * One call through a judged mechanism: waits for its ticket, runs the rest of the pipeline,
 * judges the outcome by the mechanism's `isFailure` (not asked about a `FinalError`: `stop()`
 * tells a retry to stop, and counts as no failure) and counts it with the ticket. When the
 * call's context aborts first, the ticket goes back (`release`) and the call rejects at once
 * with the reason; an outcome or verdict that comes later counts for nothing. Every ticket ends
 * in exactly one `settle`, `end` or `release`.
 */
class JudgedCall<T, K> implements EventListenerObject {
  readonly #spec: Judged<K>;
  readonly #source: AbortSource | undefined;
  readonly #context: AttemptContext;
  readonly #resolve: (value: T) => void;
  readonly #reject: (reason: unknown) => void;
  #ticket: K | undefined;
  /** A ticket is held while the call runs: an abort hands it back. */
  #held = false;
  #done = false;

  constructor(
    spec: Judged<K>,
    source: AbortSource | undefined,
    context: AttemptContext,
    resolve: (value: T) => void,
    reject: (reason: unknown) => void,
  ) {
    this.#spec = spec;
    this.#source = source;
    this.#context = context;
    this.#resolve = resolve;
    this.#reject = reject;
    source?.addEventListener('abort', this);
  }

  /** The ticket was granted: runs the call, unless it ended while waiting (then the ticket goes back). */
  run(ticket: K, next: (context: AttemptContext) => Promise<T>): void {
    if (this.#done) {
      this.#release(ticket);
      return;
    }
    this.#ticket = ticket;
    this.#held = true;
    next(this.#context).then(
      (value) => this.#ended(true, value),
      (error: unknown) => this.#ended(false, error),
    );
  }

  /** The context aborted (EventListener protocol): the ticket goes back, the call rejects now. */
  handleEvent(): void {
    const held = this.#held;
    this.#held = false;
    this.#finish(false, (this.#source as AbortSource).reason);
    if (held) this.#release(this.#ticket as K);
  }

  /** Ends the call with `reason` (a refusal): no ticket is held. */
  fail(reason: unknown): void {
    this.#finish(false, reason);
  }

  #ended(ok: boolean, outcome: unknown): void {
    if (this.#done) return;
    this.#held = false;
    const spec = this.#spec;
    const ticket = this.#ticket as K;
    let answer: unknown;
    try {
      answer = judge(spec, ok, outcome, this.#context);
    } catch (error) {
      this.#release(ticket);
      this.#finish(false, error);
      return;
    }
    if (isThenable(answer)) {
      let count: (verdict: FailureVerdict) => void;
      try {
        count = spec.end(ticket, ok, outcome);
      } catch (error) {
        this.#finish(false, error);
        return;
      }
      Promise.resolve(answer).then(
        (late) => {
          if (this.#done) return;
          try {
            count(verdict(spec.where, 'isFailure', late));
          } catch (error) {
            this.#finish(false, error);
            return;
          }
          this.#finish(ok, outcome);
        },
        (error: unknown) => this.#finish(false, error),
      );
      return;
    }
    let v: FailureVerdict;
    try {
      v = verdict(spec.where, 'isFailure', answer);
    } catch (error) {
      this.#release(ticket);
      this.#finish(false, error);
      return;
    }
    try {
      spec.settle(ticket, v, ok, outcome);
    } catch (error) {
      this.#finish(false, error);
      return;
    }
    this.#finish(ok, outcome);
  }

  #release(ticket: K): void {
    try {
      this.#spec.release(ticket);
    } catch (error) {
      // After the call ended there is nobody to tell; before, it fails with it.
      this.#finish(false, error);
    }
  }

  #finish(ok: boolean, value: unknown): void {
    if (this.#done) return;
    this.#done = true;
    this.#source?.removeEventListener('abort', this);
    if (ok) this.#resolve(value as T);
    else this.#reject(value);
  }
}

/**
 * Runs one call of a pipeline through a mechanism that judges its own outcomes (see
 * {@link Judged}): the mechanism's `execute`. A refusal (a throw or rejection of `acquire`: an
 * open breaker's `BrokenCircuitError`, a full limit's `LimitExceededError`) is the call's
 * failure, which an outer `retrying()` backs off — at least its `retryAfterMs` — and retries.
 * @internal
 */
export function judgedExecute<T, K>(
  spec: Judged<K>,
  next: (context: AttemptContext) => Promise<T>,
  context: AttemptContext,
): Promise<T> {
  const source = sourceOf(context);
  if (source === undefined) return unabortable(spec, next, context);
  if (source.aborted) return Promise.reject(source.reason);
  return new Promise<T>((resolve, reject) => {
    const call = new JudgedCall<T, K>(spec, source, context, resolve, reject);
    let ticket: K | PromiseLike<K>;
    try {
      ticket = spec.acquire(context, source !== undefined);
    } catch (error) {
      call.fail(error);
      return;
    }
    if (isThenable(ticket)) {
      Promise.resolve(ticket).then(
        (t) => call.run(t, next),
        (error: unknown) => call.fail(error),
      );
    } else call.run(ticket, next);
  });
}

/** A judged mechanism's `execute`: {@link judgedExecute} on `spec`, known to a pipeline by `JUDGED` (mechanism.ts). @internal */
export function judgedExecutor<K>(spec: Judged<K>): Mechanism['execute'] {
  const execute = <T>(next: (context: AttemptContext) => Promise<T>, context: AttemptContext): Promise<T> =>
    judgedExecute(spec, next, context);
  JUDGED.set(execute, {
    spec,
    pairWith: (inner, next, context) => judgedPair(spec, inner as Judged<unknown>, next, context),
  });
  return execute;
}

/**
 * Two judged mechanisms in a row, `a` outside `b`, around `next`: exactly what
 * `judgedExecute(a, (c) => judgedExecute(b, next, c), context)` does — `a` admits, then `b`;
 * `b` judges and counts the outcome, then `a` judges and counts what `b` passed on (the outcome,
 * or what `b`'s judging threw) — but, when nothing can abort the call and both admit at once,
 * with one reaction on the call's promise instead of one each (bench/figures/pipeline-ab.mjs).
 * @internal
 */
export function judgedPair<T, A, B>(
  a: Judged<A>,
  b: Judged<B>,
  next: (context: AttemptContext) => Promise<T>,
  context: AttemptContext,
): Promise<T> {
  if (sourceOf(context) !== undefined) return judgedExecute(a, (c) => judgedExecute(b, next, c), context);
  let ta: A | PromiseLike<A>;
  try {
    ta = a.acquire(context, false);
  } catch (error) {
    return Promise.reject(error);
  }
  if (isThenable(ta)) {
    return Promise.resolve(ta).then((t) => runCounted(a, (c) => judgedExecute(b, next, c), context, t));
  }
  let tb: B | PromiseLike<B>;
  try {
    tb = b.acquire(context, false);
  } catch (error) {
    // b's refusal is the call's failure, which a counts.
    return runCounted(a, () => Promise.reject(error), context, ta);
  }
  if (isThenable(tb)) {
    return runCounted(a, (c) => Promise.resolve(tb).then((t) => runCounted(b, next, c, t)), context, ta);
  }
  return next(context).then(
    (value) => pairCounted(a, ta, b, tb, context, true, value) as T,
    (error: unknown) => pairCounted(a, ta, b, tb, context, false, error) as T,
  );
}

/** What {@link counted} gives on `b`'s outcome, counted then by `a` as its own outcome. */
function pairCounted<A, B>(
  a: Judged<A>,
  ta: A,
  b: Judged<B>,
  tb: B,
  context: AttemptContext,
  ok: boolean,
  outcome: unknown,
): unknown {
  let passed: unknown;
  try {
    passed = counted(b, tb, context, ok, outcome);
  } catch (error) {
    return counted(a, ta, context, false, error);
  }
  // b's isFailure answered with a promise: a counts what it settles with.
  if (isThenable(passed)) {
    return Promise.resolve(passed).then(
      (value) => counted(a, ta, context, true, value),
      (error: unknown) => counted(a, ta, context, false, error),
    );
  }
  return counted(a, ta, context, true, passed);
}

/**
 * {@link judgedExecute} for a call nothing can abort (no caller's signal, no timeout around it —
 * a pipeline's success path): the same steps as {@link JudgedCall} — acquire, run, judge, count
 * or hand back — chained on the call's own promise, with no listener, no promise of its own and
 * no object to hold them (bench/figures/pipeline.mjs).
 */
function unabortable<T, K>(
  spec: Judged<K>,
  next: (context: AttemptContext) => Promise<T>,
  context: AttemptContext,
): Promise<T> {
  let ticket: K | PromiseLike<K>;
  try {
    ticket = spec.acquire(context, false);
  } catch (error) {
    return Promise.reject(error);
  }
  return isThenable(ticket)
    ? Promise.resolve(ticket).then((t) => runCounted(spec, next, context, t))
    : runCounted(spec, next, context, ticket);
}

/** Runs the rest of an unabortable call with its `ticket`, counting its outcome ({@link counted}). */
function runCounted<T, K>(
  spec: Judged<K>,
  next: (context: AttemptContext) => Promise<T>,
  context: AttemptContext,
  ticket: K,
): Promise<T> {
  return next(context).then(
    (value) => counted(spec, ticket, context, true, value) as T,
    (error: unknown) => counted(spec, ticket, context, false, error) as T,
  );
}

/**
 * The unchecked answer on an outcome: a `FinalError` (of any copy of ebb) is never a failure;
 * otherwise the user's `isFailure`, or the mechanism's own judgement. It may throw.
 */
function judge<K>(spec: Judged<K>, ok: boolean, outcome: unknown, context: AttemptContext): unknown {
  if (!ok && isFinal(outcome)) return false;
  return spec.isFailure
    ? spec.isFailure(ok ? { ok, value: outcome } : { ok, error: outcome }, context)
    : spec.judge(ok, outcome);
}

/**
 * What an unabortable call ends with, once its outcome is judged and counted with `ticket` (as
 * {@link JudgedCall} does): the value, or a throw of the error — the outcome's, or what
 * `isFailure`, its verdict or the mechanism's counting threw — or a promise of either when
 * `isFailure` answers with one.
 */
function counted<K>(spec: Judged<K>, ticket: K, context: AttemptContext, ok: boolean, outcome: unknown): unknown {
  let answer: unknown;
  try {
    answer = judge(spec, ok, outcome, context);
  } catch (error) {
    // The ticket goes back (a throw of release's own wins, as in JudgedCall).
    spec.release(ticket);
    throw error;
  }
  if (isThenable(answer)) {
    const count = spec.end(ticket, ok, outcome);
    return Promise.resolve(answer).then((late) => {
      count(verdict(spec.where, 'isFailure', late));
      if (ok) return outcome;
      throw outcome;
    });
  }
  let v: FailureVerdict;
  try {
    v = verdict(spec.where, 'isFailure', answer);
  } catch (error) {
    spec.release(ticket);
    throw error;
  }
  spec.settle(ticket, v, ok, outcome);
  if (ok) return outcome;
  throw outcome;
}

/**
 * The verdict a judged mechanism counts for `record(outcome, ticket, detail)` — the guard
 * protocol, which `withRetry()`'s `use` and hand-written callers use: `isFailure`, when given,
 * judges the outcome as `{ ok: outcome === 'success', value | error: detail }`, with a context of
 * the ticket's `attempt`, and must answer at once (a promise is refused with a `TypeError` naming
 * it: `record()` has no call to hold); without one, `'throttled'` is a throttle and anything else
 * is judged by the mechanism's default (`judge`). @internal
 */
export function recordedVerdict(
  where: string,
  // biome-ignore lint/suspicious/noExplicitAny: one mechanism judges calls of every value type
  isFailure: IsFailure<any, any> | undefined,
  judge: (ok: boolean, detail: unknown) => FailureVerdict,
  outcome: Outcome,
  detail: unknown,
  attempt: number,
): FailureVerdict {
  const ok = outcome === 'success';
  if (!isFailure) return outcome === 'throttled' ? 'throttled' : judge(ok, detail);
  if (!ok && isFinal(detail)) return false;
  const answer: unknown = isFailure(ok ? { ok, value: detail } : { ok, error: detail }, new Attempt(attempt, 0));
  if (isThenable(answer)) {
    handled(answer);
    throw new TypeError(
      `${where}: \`isFailure\` returned a promise; record() (withRetry()'s \`rate\`) needs true, false or 'throttled' at once. An async isFailure works in a pipeline.`,
    );
  }
  return verdict(where, 'isFailure', answer);
}
