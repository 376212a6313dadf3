import type { HostQueue } from './host-queues.js';

/** setTimeout's longest delay (2^31 - 1 ms); longer waits re-arm. */
const MAX_TIMER_MS = 2_147_483_647;
const now = (): number => performance.now();

/**
 * host-queues.ts for browsers (package.json `exports`, condition `browser`): no shared timer
 * queue. A tab does not hold 100,000 waiting retries, and the queue is 1.6 kB of a small bundle;
 * here each wait is one `setTimeout`, whose handle the entry keeps in its `slot` (a browser's
 * handle is a positive integer; Node's converts to one), re-armed until the due time on
 * `performance.now()` has come — a host timer may fire a little early, and one longer than 2^31 − 1 ms
 * cannot be armed at once.
 * @internal
 */
const queue: HostQueue = {
  now,
  add(entry, dueAt) {
    if (!(dueAt >= 0 && dueAt < Infinity)) {
      throw new RangeError(`TimerQueue.add(): expected a due time that is a finite number >= 0, got ${String(dueAt)}.`);
    }
    const fire = () => {
      const left = Math.ceil(dueAt - now());
      if (left > 0) entry.slot = +setTimeout(fire, left < MAX_TIMER_MS ? left : MAX_TIMER_MS);
      else {
        entry.slot = -1;
        entry.wake();
      }
    };
    queue.remove(entry);
    entry.slot = +setTimeout(fire, Math.max(0, Math.min(Math.ceil(dueAt - now()), MAX_TIMER_MS)));
  },
  remove(entry) {
    if (entry.slot !== -1) clearTimeout(entry.slot);
    entry.slot = -1;
  },
};

/** The one queue of a browser build: `unref` means nothing there. @internal */
export const hostQueue = (_unref?: boolean): HostQueue => queue;
