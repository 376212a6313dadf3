import { Attempt } from './attempt.js';
import type { AbortSource } from './execution.js';

/**
 * The context a pipeline hands its mechanisms and the operation: an {@link Attempt} (attempt,
 * elapsed time, a signal made only when read) that is also an abort source mechanisms can watch
 * without making a signal — an `AbortSignal` costs about 1.7 µs to make in Node.js 20, more than
 * the whole success path of a pipeline is allowed (bench/, the pipeline's overhead).
 *
 * Aborts reach a scope two ways: the mechanism that made it aborts it (a retry aborts its running
 * attempt, a timeout its child on expiry), or — for the call's root scope — its `parent`, the
 * caller's signal, to which the scope listens only while something watches it, so a long-lived
 * signal of the caller keeps no listener once the call settles.
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

  override abort(reason: unknown): boolean {
    if (!super.abort(reason)) return false;
    this.#aborted = true;
    this.#reason = reason;
    const watchers = this.#watchers;
    this.#unlink();
    for (const w of watchers ?? []) w.handleEvent(undefined as unknown as Event);
    return true;
  }

  /** The parent aborted (EventListener protocol). */
  handleEvent(): void {
    this.abort((this.#parent as AbortSource).reason);
  }

  addEventListener(_type: 'abort', listener: EventListenerObject): void {
    if (this.#aborted) return;
    if (!this.#watchers) {
      this.#watchers = [];
      this.#parent?.addEventListener('abort', this);
    }
    this.#watchers.push(listener);
  }

  removeEventListener(_type: 'abort', listener: EventListenerObject): void {
    const watchers = this.#watchers;
    const i = watchers ? watchers.indexOf(listener) : -1;
    if (i < 0) return;
    (watchers as EventListenerObject[]).splice(i, 1);
    if (!watchers?.length) this.#unlink();
  }

  #unlink(): void {
    if (this.#watchers) this.#parent?.removeEventListener('abort', this);
    this.#watchers = undefined;
  }
}

/**
 * What a mechanism watches for an abort of `context`: the scope itself when something can abort
 * it, nothing when nothing can, and for a context a custom mechanism made (not a scope) its
 * `signal`.
 * @internal
 */
export function sourceOf(context: { readonly signal: AbortSignal }): AbortSource | undefined {
  return context instanceof Scope ? (context.abortable ? context : undefined) : context.signal;
}
