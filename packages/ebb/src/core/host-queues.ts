/**
 * The process-wide timer queues behind the system clocks (see `hostQueue()` in clock.ts): one
 * binary heap on one host timer for every retry waiting in its backoff, so that 100,000 waiting
 * retries in a server hold heap slots rather than host timers (docs/dev/size.md). A browser build
 * replaces this module with host-queues.browser.ts (package.json `exports`, condition `browser`).
 * @internal
 */
export { refQueue, unrefQueue } from './timer-queue.js';
