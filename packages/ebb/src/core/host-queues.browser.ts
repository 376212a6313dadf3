import type { TimerQueue } from './timer-queue.js';

/**
 * host-queues.ts for browsers (package.json `exports`, condition `browser`): no shared timer
 * queue. A tab does not hold 100,000 waiting retries, and the queue is 1.6 kB of a small bundle;
 * without it, the executor sleeps on the clock's own `sleep()` (one `setTimeout` a wait, cut
 * short by the caller's signal), as it does on any clock other than the system clocks.
 * @internal
 */
export const refQueue: TimerQueue | undefined = undefined;
/** @internal */
export const unrefQueue: TimerQueue | undefined = undefined;
