import { refQueue, unrefQueue, type Wakeup } from './timer-queue.js';

/**
 * How the executor and `timeout()` wait on the host's time when no custom `Clock` is given: a
 * queue of wake-ups. In Node.js it is one of the process-wide timer queues (timer-queue.ts): one
 * binary heap on one host timer for every retry waiting in its backoff, so that 100,000 waiting
 * retries in a server hold heap slots rather than host timers (docs/dev/size.md). A browser build
 * replaces this module with host-queues.browser.ts (package.json `exports`, condition `browser`).
 * @internal
 */
export interface HostQueue {
  /** The host's monotonic time in ms (`performance.now()`). */
  now(): number;
  /**
   * Wakes `entry` (its `wake()`) at `dueAt`, never sooner and never within this call; throws a
   * RangeError for a due time that is not a finite number >= 0. What `wake()` throws goes to the
   * entry's `fail()`, never to the host timer's callback.
   */
  add(entry: Wakeup, dueAt: number): void;
  /** Takes `entry` out if it is queued (its `slot` is not -1). */
  remove(entry: Wakeup): void;
}

/** The queue whose timer holds a Node.js process open, or (`unref`) the one that does not. @internal */
export const hostQueue = (unref?: boolean): HostQueue => (unref ? unrefQueue : refQueue);
