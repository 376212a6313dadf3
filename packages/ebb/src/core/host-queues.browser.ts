import type { HostQueue } from './host-queues.js';

/** setTimeout's longest delay (2^31 - 1 ms); longer waits re-arm. */
const MAX_TIMER_MS = 2_147_483_647;
const now = (): number => performance.now();

/**
 * host-queues.ts for browsers (package.json `exports`, condition `browser`): no shared timer
 * queue. A tab does not hold 100,000 waiting retries, and the queue is 1.6 kB of a small bundle;
 * here each wait is one `setTimeout`, whose handle the entry keeps in its `slot` (a browser's
 * handle is a positive integer; Node's converts to one), re-armed until the due time on
 * `performance.now()` has come — a host timer may fire a little early, and one longer than
 * 2^31 − 1 ms cannot be armed at once.
 * @internal
 */
const queueOf = (unref: boolean): HostQueue => {
  const queue: HostQueue = {
    now,
    // No check of dueAt here: each entry has a timer of its own, so a bad one (which the
    // executor refuses before it gets here) could stall no other.
    add(entry, dueAt) {
      const arm = (): void => {
        const left = Math.ceil(dueAt - now());
        const timer = setTimeout(fire, left < 0 ? 0 : left < MAX_TIMER_MS ? left : MAX_TIMER_MS);
        // Outside browsers (a runtime that took this build), `unref` still means what it says.
        if (unref) (timer as { unref?: () => void }).unref?.();
        entry.slot = +timer;
      };
      const fire = (): void => {
        if (dueAt > now()) arm();
        else {
          entry.slot = -1;
          // Nothing a wake-up throws reaches the host timer's callback: it goes to the entry.
          try {
            entry.wake();
          } catch (error) {
            try {
              entry.fail?.(error);
            } catch {
              // The entry cannot be told: the host must still not see it.
            }
          }
        }
      };
      queue.remove(entry);
      arm();
    },
    remove(entry) {
      if (entry.slot !== -1) clearTimeout(entry.slot);
      entry.slot = -1;
    },
  };
  return queue;
};
const refQueue = /* @__PURE__ */ queueOf(false);
const unrefQueue = /* @__PURE__ */ queueOf(true);

/** The queue whose timers hold a process open, or (`unref`) the one whose timers do not. @internal */
export const hostQueue = (unref?: boolean): HostQueue => (unref ? unrefQueue : refQueue);
