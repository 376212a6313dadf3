/**
 * What a `sharedRate` tells about itself: its counters (`stats`) and its events to `onEvent`
 * (fallback, resync, state lost, repair), each event counted and sent by one method. Its own
 * module because reporting is apart from the protocol: the class in shared-rate.ts only says
 * what happened.
 */
import { type SharedListener, type SharedMode, type SharedProblem, sendEvent } from './protocol.js';
import type { FallbackSeed } from './rate-fallback.js';
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

  constructor(readonly onEvent: SharedListener) {}

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

  /** Redis failed or timed out and the member went local, its controller starting at `seed`. */
  fallback(error: unknown, atMs: number, seed: FallbackSeed): void {
    this.fallbacks++;
    sendEvent(this.onEvent, { type: 'fallback', error, atMs, seedFrom: seed.from, seed: seed.seed });
  }

  /** Redis answered again after a fallback. */
  resync(atMs: number): void {
    this.resyncs++;
    sendEvent(this.onEvent, { type: 'resync', error: undefined, atMs });
  }

  /** A lease found a stored value out of bounds, and the script rewrote the state. */
  repair(fault: SharedProblem, atMs: number): void {
    this.repairs++;
    sendEvent(this.onEvent, { type: 'repair', error: undefined, atMs, ...fault });
  }

  /** A lease found the state this member knew gone: seen by its `field` (`'generation'` or `'epoch'`). */
  stateLost(key: string, field: 'generation' | 'epoch', atMs: number): void {
    this.stateLosses++;
    sendEvent(this.onEvent, { type: 'state-lost', error: undefined, atMs, key, field });
  }
}
