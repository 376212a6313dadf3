import type { Clock } from '../core/clock.js';

/**
 * One re-armable timer on a `Clock`: `arm(ms)` calls `fire` once after `ms`, unless it is
 * already armed (the earlier deadline stands), cancelled first, or stopped. The shared budgets'
 * batching (`SharedState`) and the shared rate's lease renewal (`sharedRate`) each hold one.
 */
export class Rearm {
  readonly #clock: Clock;
  readonly #fire: () => void;
  #timer: AbortController | undefined;
  #stopped = false;

  constructor(clock: Clock, fire: () => void) {
    this.#clock = clock;
    this.#fire = fire;
  }

  arm(ms: number): void {
    if (this.#timer || this.#stopped) return;
    const timer = new AbortController();
    this.#timer = timer;
    this.#clock.sleep(ms, timer.signal).then(
      () => {
        // A timer cancelled after its sleep ended but before this ran does not fire.
        if (this.#timer !== timer) return;
        this.#timer = undefined;
        this.#fire();
      },
      () => {},
    );
  }

  /** Whether a call is pending. */
  get armed(): boolean {
    return this.#timer !== undefined;
  }

  /** Cancels the pending call, if any; `arm` works again afterwards. */
  cancel(): void {
    this.#timer?.abort();
    this.#timer = undefined;
  }

  /** Cancels, and `arm` does nothing from now on. */
  stop(): void {
    this.#stopped = true;
    this.cancel();
  }
}
