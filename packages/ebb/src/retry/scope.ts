import { DEV } from '../core/dev.js';
import { Attempt } from './attempt.js';
import type { AbortSource } from './execution.js';

/**
 * The context a pipeline hands its mechanisms and the operation: an {@link Attempt} (attempt,
 * elapsed time, a signal made only when read) that is also an abort source mechanisms can watch
 * without making a signal — an `AbortSignal` costs about 1.7 µs to make in Node.js 20, more than
 * the whole success path of a pipeline is allowed (bench/, the pipeline's overhead).
 *
 * A scope is aborted by whoever made it — the pipeline aborts a call's root scope when the
 * caller's signal aborts, a retry its running attempt's, a timeout its child's on expiry — and
 * tells its watchers. `parent` is only read: a scope counts as aborted when its parent is (a
 * signal that turned aborted without an event still stops the next step).
 * @internal
 */
export class Scope extends Attempt implements AbortSource {
  /** Whether anything can abort this scope: a caller's signal, a timeout, an abortable parent. */
  readonly abortable: boolean;
  readonly #parent: AbortSource | undefined;
  #watchers: EventListenerObject[] | undefined;
  #aborted = false;
  #reason: unknown;

  constructor(attempt: number, elapsedMs: number, parent?: AbortSource, abortable = false) {
    super(attempt, elapsedMs);
    this.#parent = parent;
    this.abortable = abortable || (parent instanceof Scope ? parent.abortable : parent !== undefined);
  }

  get aborted(): boolean {
    return this.#aborted || this.#parent?.aborted === true;
  }

  get reason(): unknown {
    return this.#aborted ? this.#reason : this.#parent?.reason;
  }

  /** Aborts this scope: its signal (if made), then every watcher, each once. */
  override abort(reason: unknown): boolean {
    if (!super.abort(reason)) return false;
    this.#aborted = true;
    this.#reason = reason;
    const watchers = this.#watchers;
    this.#watchers = undefined;
    for (const w of watchers ?? []) w.handleEvent(undefined as unknown as Event);
    return true;
  }

  /** Watches this scope's abort (the `AbortSignal` protocol, for `'abort'`). */
  addEventListener(_type: 'abort', listener: EventListenerObject): void {
    if (this.#aborted) return;
    this.#watchers ??= [];
    this.#watchers.push(listener);
  }

  removeEventListener(_type: 'abort', listener: EventListenerObject): void {
    const watchers = this.#watchers;
    const i = watchers ? watchers.indexOf(listener) : -1;
    if (i >= 0) (watchers as EventListenerObject[]).splice(i, 1);
  }
}

/**
 * What a mechanism watches for an abort of `context`: the scope itself when something can abort
 * it, nothing when nothing can, and for a context a custom mechanism made (not a scope) its
 * `signal`.
 * @internal
 */
export function sourceOf(context: { readonly signal: AbortSignal }): AbortSource | undefined {
  if (context instanceof Scope) return context.abortable ? context : undefined;
  // A mechanism's execute(operation) called by hand (cockatiel's policy.execute(fn)): no context.
  if (context === undefined) {
    throw new TypeError(
      DEV
        ? 'A mechanism’s execute(next, context) is called by a pipeline. Run one call through it with pipeline([mechanism]).execute(operation).'
        : 'execute(): context undefined',
    );
  }
  return context.signal;
}
