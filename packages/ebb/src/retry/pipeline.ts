import { DEV } from '../core/dev.js';
import { brief, checkKeys, mistyped, optionsObject } from '../core/validate.js';
import type { AttemptContext } from './contexts.js';
import type { Fallback } from './fallback.js';
import { JUDGED, type JudgedEntry, type Mechanism, mechanismAt, SEALED } from './mechanism.js';
import { Scope } from './scope.js';

/** Options of {@link pipeline}. */
export interface PipelineOptions {
  /** A name for the pipeline, for logs and metrics (`pipeline.name`). Default none. */
  readonly name?: string;
}

/** Options of one call of a pipeline. */
export interface ExecuteOptions {
  /** Aborts the call: every wait is cut short, no attempt starts after it, every slot and timer is released. */
  readonly signal?: AbortSignal;
}

/**
 * What the fallbacks among the mechanisms `M` may resolve a call with: `F` for each
 * `Fallback<F>`, `never` when there is none.
 */
export type FallbackValue<M> = M extends Fallback<infer F> ? ('fallsBackTo' extends keyof M ? F : never) : never;

/**
 * Mechanisms composed around one call (see {@link pipeline}); `F`: what its fallbacks may resolve
 * a call with (`never` without one).
 */
export interface Pipeline<F = never> {
  /** The name given to `pipeline()`, or undefined. */
  readonly name: string | undefined;
  /**
   * Calls `operation` through the pipeline's mechanisms, outermost first. The operation gets the
   * context of its attempt: `{ attempt, signal, elapsedMs }` (the signal aborts when the call's
   * signal does or a timeout around it runs out; pass it to `fetch`).
   */
  execute<T>(
    operation: (context: AttemptContext) => T | PromiseLike<T>,
    options?: ExecuteOptions,
  ): Promise<Awaited<T> | F>;
}

/**
 * One call with a caller's signal: the pipeline listens to the signal (and nothing else does),
 * aborts the call's root scope — every mechanism watching it, every attempt's signal — and
 * rejects with the reason at once, whatever the mechanisms do; the listener goes when the call
 * settles.
 */
class SignalledCall<T> implements EventListenerObject {
  readonly #signal: AbortSignal;
  readonly #root: Scope;
  #resolve: ((value: T) => void) | undefined;
  #reject: ((reason: unknown) => void) | undefined;

  constructor(signal: AbortSignal, root: Scope, resolve: (value: T) => void, reject: (reason: unknown) => void) {
    this.#signal = signal;
    this.#root = root;
    this.#resolve = resolve;
    this.#reject = reject;
    signal.addEventListener('abort', this);
  }

  handleEvent(): void {
    const reason = this.#signal.reason;
    this.#root.abort(reason);
    this.settle(false, reason);
  }

  settle(ok: boolean, value: unknown): void {
    const resolve = this.#resolve;
    const reject = this.#reject as (reason: unknown) => void;
    if (!resolve) return;
    this.#resolve = this.#reject = undefined;
    this.#signal.removeEventListener('abort', this);
    if (ok) resolve(value as T);
    else reject(value);
  }
}

/** Calls the operation, turning a throw into a rejection: every `next` returns a promise. */
function call<T>(operation: (context: AttemptContext) => T | PromiseLike<T>, context: AttemptContext): Promise<T> {
  try {
    const result = operation(context);
    return result instanceof Promise ? result : Promise.resolve(result);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Runs `steps[i]` and everything after it around `operation` with `context`: the operation itself
 * past the last step. Never throws: a throw becomes a rejection.
 */
function run<T>(
  plan: Plan,
  i: number,
  operation: (context: AttemptContext) => T | PromiseLike<T>,
  context: AttemptContext,
): Promise<Awaited<T>> {
  const { steps } = plan;
  if (i === steps.length) return call(operation, context) as Promise<Awaited<T>>;
  try {
    const step = steps[i] as Mechanism;
    const pair = plan.pairs[i];
    // Two judged mechanisms of ebb's in a row, still as they were when the pipeline was made.
    if (pair !== undefined && step.execute === pair[0] && (steps[i + 1] as Mechanism).execute === pair[2]) {
      return pair[1].pairWith(pair[3].spec, (c) => run(plan, i + 2, operation, c), context) as Promise<Awaited<T>>;
    }
    return Promise.resolve(step.execute((c) => run(plan, i + 1, operation, c), context)) as Promise<Awaited<T>>;
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A judged mechanism's `execute` and its spec ({@link JUDGED}), then the next one's. */
type Pair = readonly [Mechanism['execute'], JudgedEntry, Mechanism['execute'], JudgedEntry];

/** The steps of a pipeline, and where two judged mechanisms follow each other (run as one: `JudgedEntry.pairWith`). */
interface Plan {
  readonly steps: readonly Mechanism[];
  readonly pairs: readonly (Pair | undefined)[];
}

/** The plan of `steps`: each judged mechanism followed by another is paired with it. */
function planOf(steps: readonly Mechanism[]): Plan {
  const pairs: (Pair | undefined)[] = [];
  for (let i = 0; i < steps.length; i++) {
    const ea = (steps[i] as Mechanism).execute;
    const eb = i + 1 < steps.length ? (steps[i + 1] as Mechanism).execute : undefined;
    const a = JUDGED.get(ea);
    const b = eb && JUDGED.get(eb);
    pairs.push(a && b && eb ? [ea, a, eb, b] : undefined);
  }
  return { steps, pairs };
}

/** The root context of every call without a signal whose first mechanism never hands its context on ({@link SEALED}). */
const ROOT = /* @__PURE__ */ new Scope(1, 0);

/**
 * Composes mechanisms around one operation: `mechanisms[0]` is the outermost, each runs the
 * ones after it (Polly v8's `ResiliencePipelineBuilder` order: the first added is outermost;
 * cockatiel's `wrap` and resilience4j's `Decorators` compose the same way). A mechanism is
 * `retrying()`, `timeout()`, `fallback()`, `circuitBreaker()`, `concurrencyLimit()` and
 * `bulkhead` of `ebb/resilience`, the rate controllers of `ebb/rate`, or any object with
 * `execute(next, context)` ({@link Mechanism}). A hand-written guard of the
 * `acquire`/`record`/`release` shape goes in wrapped: `guard(myGuard)`.
 *
 * The order is yours; Microsoft's recommended one (the .NET resilience handler's standard
 * pipeline) is, outermost first: `fallback`, a total `timeout`, `retrying`, `circuitBreaker`, a
 * rate controller, `concurrencyLimit`, an attempt `timeout`. Why: the fallback answers for
 * everything inside; the total timeout bounds the retries and their waits; the breaker sits
 * inside the retry so that each attempt counts and an open breaker's refusal is backed off
 * (its `retryAfterMs`) rather than hammered; the limit holds a slot only while an attempt runs;
 * the attempt timeout bounds one attempt and frees its slot.
 *
 * Every call gets its own context; abort (`execute(op, { signal })`) cuts every wait at once,
 * starts nothing after it, and releases every slot, ticket and timer. Checked here: a value that
 * is not a mechanism is refused, naming its place (a bare guard: with the fix, `guard(x)`).
 *
 * @example
 * const api = pipeline([
 *   fallback((outcome) => cached),
 *   retrying({ backoff: exponential({ maxAttempts: 4 }) }),
 *   circuitBreaker(),
 *   concurrencyLimit(),
 *   timeout(2_000),
 * ], { name: 'prices' });
 * const prices = await api.execute(({ signal }) => fetch(url, { signal }).then((r) => r.json()));
 */
export function pipeline<const M extends readonly Mechanism[]>(
  mechanisms: M,
  options?: PipelineOptions,
): Pipeline<FallbackValue<M[number]>> {
  const where = 'pipeline()';
  if (!Array.isArray(mechanisms)) mistyped(where, 'mechanisms', mechanisms, DEV ? 'an array of mechanisms' : '');
  const steps = mechanisms.map((m, i) => mechanismAt(where, `mechanisms[${i}]`, m));
  // The same breaker twice saw each call twice: its probe's own second pass found the probe slot
  // taken, so once open it never closed. Two places take two mechanisms.
  const again = mechanisms.findIndex((m, i) => mechanisms.indexOf(m) !== i);
  if (again >= 0) {
    throw new TypeError(
      DEV
        ? `${where}: \`mechanisms[${again}]\` is \`mechanisms[${mechanisms.indexOf(mechanisms[again] as Mechanism)}]\` again. A mechanism takes one place in a pipeline: make one for each place (circuitBreaker() twice).`
        : brief(where, `mechanisms[${again}]`, mechanisms[again]),
    );
  }
  const o = optionsObject(where, options);
  const name = o.name;
  if (name !== undefined && typeof name !== 'string') mistyped(where, 'name', name, DEV ? 'a string' : '');
  const sealed = steps.length > 0 && SEALED.has(steps[0] as Mechanism);
  const plan = planOf(steps);
  return {
    name,
    execute<T>(
      operation: (context: AttemptContext) => T | PromiseLike<T>,
      options?: ExecuteOptions,
    ): Promise<Awaited<T>> {
      try {
        if (typeof operation !== 'function')
          mistyped('pipeline.execute()', 'operation', operation, DEV ? 'a function' : '');
        let signal: AbortSignal | undefined;
        if (options !== undefined) {
          const o = optionsObject('pipeline.execute()', options);
          // cockatiel's and Polly's shape, execute(fn, signal), would otherwise be an options
          // object with no `signal`: a call that no abort reaches.
          if ('aborted' in o) {
            throw new TypeError(
              DEV
                ? 'pipeline.execute(): got an AbortSignal where the options go. Pass execute(operation, { signal }).'
                : brief('pipeline.execute()', 'options', o),
            );
          }
          checkKeys('pipeline.execute()', o, ['signal']);
          signal = o.signal;
        }
        if (signal !== undefined && (typeof signal?.addEventListener !== 'function' || !('aborted' in signal))) {
          mistyped(
            'pipeline.execute()',
            'signal',
            signal,
            DEV ? 'an AbortSignal' : '',
            DEV ? 'Pass controller.signal.' : '',
          );
        }
        if (signal?.aborted) return Promise.reject(signal.reason);
        // The first mechanism gets the shared root when it never hands its context on (a retry,
        // a timeout: each makes its own), so that nothing can read or watch it; else one of its own.
        if (signal === undefined) return run(plan, 0, operation, sealed ? ROOT : new Scope(1, 0));
        const root = new Scope(1, 0, signal, true);
        return new Promise<Awaited<T>>((resolve, reject) => {
          const call = new SignalledCall<Awaited<T>>(signal, root, resolve, reject);
          run(plan, 0, operation, root).then(
            (value) => call.settle(true, value),
            (error: unknown) => call.settle(false, error),
          );
        });
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}
