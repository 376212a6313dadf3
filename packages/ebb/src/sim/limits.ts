import { invalid } from '../core/validate.js';

/**
 * The largest run each simulator accepts. A simulator is a loop over its size, so an option
 * such as `slots: 2 ** 53` would run for years: the bounds keep every accepted call within
 * minutes on a laptop (the slotted simulators step 1–3 × 10⁸ station-slots a second,
 * `bench/RESULTS.md`) and refuse the rest at the call, naming the option.
 * @internal
 */
export const SIM_LIMITS = {
  /** Stations of the slotted simulators. */
  stations: 100_000,
  /** Slots of the slotted simulators. */
  slots: 1_000_000_000,
  /** Station-slots (stations × slots) of one slotted run: about 10 minutes at 2 × 10⁸ a second. */
  stationSlots: 100_000_000_000,
  /** Clients of the contention and overload models. */
  clients: 1_000_000,
  /** Repetitions of the contention model and draws of the delay distribution. */
  runs: 100_000_000,
  /** Simulated time of the overload and resilience models: one day. */
  horizonMs: 86_400_000,
  /** Requests one run of the resilience models may send, as estimated from its options. */
  requests: 100_000_000,
  /** Time bins of one run's series. */
  bins: 1_000_000,
} as const;

/** Returns `value`, or throws a RangeError naming `name` when it is above `max`. @internal */
export function atMost(where: string, name: string, value: number, max: number, fix: string): number {
  if (value > max) invalid(where, name, value, `at most ${max}`, fix);
  return value;
}

/** Checks the size of a slotted run (stations, slots, and their product). @internal */
export function slottedSize(where: string, stations: number, slots: number): void {
  atMost(where, 'stations', stations, SIM_LIMITS.stations, 'Such as 32.');
  atMost(where, 'slots', slots, SIM_LIMITS.slots, 'Such as 1000000.');
  atMost(
    where,
    'slots',
    slots,
    Math.floor(SIM_LIMITS.stationSlots / stations),
    `With ${stations} stations, stations × slots is bounded by ${SIM_LIMITS.stationSlots}.`,
  );
}

/**
 * Checks the length of a run of the outage, brownout or slow-tail model: at most a day of
 * simulated time, at most {@link SIM_LIMITS.requests} requests at `requestsPerMs` (an upper
 * estimate from the model's own options), and at most {@link SIM_LIMITS.bins} bins. @internal
 */
export function runLength(where: string, durationMs: number, requestsPerMs: number, binMs: number): void {
  const byRequests = SIM_LIMITS.requests / requestsPerMs;
  const max = byRequests < SIM_LIMITS.horizonMs ? Math.floor(byRequests) : SIM_LIMITS.horizonMs;
  atMost(where, 'durationMs', durationMs, max, 'Fewer clients or a shorter run: the simulated requests are bounded.');
  if (durationMs / binMs > SIM_LIMITS.bins) {
    invalid(where, 'binMs', binMs, `at least durationMs / ${SIM_LIMITS.bins}`, 'Such as 1000 for one-second bins.');
  }
}
