import { isThenable } from '../core/boundary.js';
import type { AttemptContext } from './contexts.js';

/**
 * The context an attempt receives. A class with a lazy `signal` rather than a frozen object:
 * the success path pays neither `Object.freeze` nor an `AbortController` it does not use.
 * @internal
 */
export class Attempt implements AttemptContext {
  readonly attempt: number;
  readonly elapsedMs: number;
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;

  constructor(attempt: number, elapsedMs: number) {
    this.attempt = attempt;
    this.elapsedMs = elapsedMs;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts this attempt's signal (now, or when it is first read). */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/** An operation as the executor calls it. @internal */
export type Operation<T> = (context: AttemptContext) => T | PromiseLike<T>;
// True for anything with a callable `then` (a throwing `then` getter reads as none).
export { isThenable } from '../core/boundary.js';
/**
 * Calls `hook(context)` if there is a hook, then `next` — once its promise fulfils, when it
 * returns one. A hook that throws or rejects hands its error to `fail`. @internal
 */
export function callHook<C>(
  hook: ((context: C) => unknown) | undefined,
  context: () => C,
  next: () => void,
  fail: (error: unknown) => void,
): void {
  if (hook === undefined) {
    next();
    return;
  }
  try {
    const result = hook(context());
    if (isThenable(result)) {
      result.then(next, fail);
      return;
    }
  } catch (error) {
    fail(error);
    return;
  }
  next();
}
