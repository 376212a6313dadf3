/**
 * What a `sharedRate` tells about itself: its counters (`stats`) and its events to `onEvent`
 * (fallback, resync, state lost, repair). Its own module because reporting is apart from the
 * protocol that counts: the class in shared-rate.ts only says what happened.
 */
import type { SharedEvent, SharedMode } from './protocol.js';
import type { SharedRateStats } from './shared-rate-options.js';

/** The counters of one `sharedRate`, and the listener its events go to. */
export class Tally {
  errors = 0;
  fallbacks = 0;
  resyncs = 0;
  throttlesSent = 0;
  repairs = 0;
  stateLosses = 0;
  staleThrottles = 0;

  constructor(readonly onEvent: ((event: SharedEvent) => void) | undefined) {}

  /** The counters as `SharedRate.stats` shows them: a fresh object on each read. */
  stats(mode: SharedMode, commands: number): SharedRateStats {
    return {
      mode,
      commands,
      errors: this.errors,
      fallbacks: this.fallbacks,
      resyncs: this.resyncs,
      throttlesSent: this.throttlesSent,
      repairs: this.repairs,
      stateLosses: this.stateLosses,
      staleThrottles: this.staleThrottles,
    };
  }

  /** Hands `event`, frozen, to the listener. */
  emit(event: SharedEvent): void {
    try {
      this.onEvent?.(Object.freeze(event));
    } catch {
      // A listener's throw must not break the controller every request of the process shares.
    }
  }
}
