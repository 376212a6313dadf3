/**
 * `sharedRate`'s two kinds of ticket and its fallback to a local `adaptiveRate`: a request let
 * through on a share carries the fleet's epoch and generation; one let through by the local
 * controller carries that controller and its own ticket, so that its outcome goes back to it even
 * after a resync; where the local controller starts, and how long it lives. Its own module because
 * the fallback is its own concept: what a process does while Redis does not answer, apart from
 * the lease protocol.
 */
import type { Clock } from '../core/clock.js';
import { type AdaptiveRate, type AdaptiveRateOptions, adaptiveRate } from '../rate/adaptive-rate.js';
import type { LawOptions } from '../rate/law-options.js';

/** A ticket of a request this controller let through on a share: the fleet's epoch and generation it was sent in. */
export class SharedTicket {
  constructor(
    readonly epoch: number,
    readonly generation: number,
  ) {}
}

/** A ticket of a request the local fallback controller let through. */
export class LocalTicket {
  constructor(
    readonly controller: AdaptiveRate,
    readonly inner: unknown,
  ) {}
}

/** Sent with a grant in place of a ticket while on fallback: the waiter goes on to the local controller. */
export const FORWARD = Symbol('forward');

/** Where a local controller starts, and from what. */
export interface FallbackSeed {
  readonly seed: number;
  readonly from: 'fleet' | 'initial';
}

/**
 * Where a local controller starts: the last share Redis granted (the fleet's rate divided as it
 * was when Redis went away), else — a process that never heard a finite share — the caller's
 * own `initialRatePerSecond`, within its bounds.
 */
export function fallbackSeed(law: LawOptions, heard: boolean, share: number): FallbackSeed {
  const { minRatePerSecond: lo, maxRatePerSecond: hi, initialRatePerSecond } = law;
  const clamp = (x: number) => Math.min(hi, Math.max(lo, x));
  if (heard && Number.isFinite(share)) return { seed: clamp(share), from: 'fleet' };
  return { seed: clamp(initialRatePerSecond), from: 'initial' };
}

/**
 * The local controller of a fallback: built when the member falls back (or a request is forwarded
 * to it), starting where `seed()` says; dropped once the member is back on shares and no request
 * waits on it, so the next fallback starts from the share heard then.
 */
export class LocalFallback {
  #controller: AdaptiveRate | undefined;

  /**
   * `options`: the law's options as the caller gave them; `seed`: where a new controller starts,
   * requests per second; `granted`: called for each request the local controller lets go.
   */
  constructor(
    readonly options: AdaptiveRateOptions,
    readonly clock: Clock,
    readonly seed: () => number,
    readonly granted: () => void,
  ) {}

  /** The local controller, built at its first need. */
  controller(): AdaptiveRate {
    this.#controller ??= adaptiveRate({ ...this.options, initialRatePerSecond: this.seed(), clock: this.clock });
    return this.#controller;
  }

  /**
   * Acquires from the local controller: the ticket carries the controller, so its outcome goes
   * back to it; `granted` hears of the request when it is let go (not of one aborted while waiting).
   */
  acquire(signal: AbortSignal | undefined): unknown {
    const local = this.controller();
    const inner = local.acquire(signal);
    const ticket = (t: unknown) => {
      this.granted();
      return new LocalTicket(local, t);
    };
    return inner instanceof Promise ? inner.then(ticket) : ticket(inner);
  }

  /** The local controller while it lives, else undefined. */
  get running(): AdaptiveRate | undefined {
    return this.#controller;
  }

  /** Requests waiting on the local controller. */
  get waiting(): number {
    return this.#controller?.waiting ?? 0;
  }

  /** Back on shares: the controller goes once no request waits on it. */
  settle(): void {
    if (this.#controller?.waiting === 0) this.#controller = undefined;
  }
}
