import { seeded } from '../core/random.js';
import { checkKeys, count, invalid, nonNegative, optionsObject } from '../core/validate.js';
import { atMost, SIM_LIMITS } from './limits.js';

/** Options of {@link simulateSharedRateCost}. Rates are requests per second; durations ms. */
export interface SharedRateCostOptions {
  /** Processes sharing the rate. Default 1000. */
  readonly processes?: number;
  /** Requests per second of the whole fleet, spread evenly over the processes (Poisson arrivals). Required. */
  readonly requestsPerSecond: number;
  /** The lease period of `sharedRate` (its `leaseMs`). Default 500. */
  readonly leaseMs?: number;
  /** Simulated time. Default 60000. */
  readonly durationMs?: number;
  /**
   * Congestion events per minute at steady state (the fleet's probes above the limit; with
   * `adaptiveRate`'s law at most one per `maxCoolOffMs`, 8 s: 7.5 a minute). Default 7.5.
   */
  readonly eventsPerMinute?: number;
  /** Requests the service refuses (429s) per event, spread over the processes at random. Default 5. */
  readonly throttlesPerEvent?: number;
  /** Seed of the arrivals. Default 1. */
  readonly seed?: number;
}

/** What {@link simulateSharedRateCost} counts, per second of simulated time. */
export interface SharedRateCostResult {
  readonly processes: number;
  readonly requestsPerSecond: number;
  /** Redis commands per second, all kinds. */
  readonly commandsPerSecond: number;
  /** Of which lease renewals of processes with traffic in their last three lease periods. */
  readonly renewalsPerSecond: number;
  /** Of which first leases after a silence (a lapsed lease is asked for again before requests go). */
  readonly resyncsPerSecond: number;
  /** Of which throttle reports (at most one per process per congestion event). */
  readonly throttleReportsPerSecond: number;
  readonly commandsPerRequest: number;
  /** Processes holding a live lease, on average. */
  readonly meanLiveLeases: number;
}

/** A Poisson draw by inversion (mean below 30) or a rounded normal approximation (above). */
function poisson(random: () => number, mean: number): number {
  if (mean <= 0) return 0;
  if (mean > 30) {
    const u = Math.max(Number.MIN_VALUE, random());
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
    return Math.max(0, Math.round(mean + Math.sqrt(mean) * z));
  }
  const limit = Math.exp(-mean);
  let k = 0;
  let p = random();
  while (p > limit && k < 1000) {
    k++;
    p *= random();
  }
  return k;
}

/**
 * A model of many processes sharing one rate through `sharedRate`'s leasing protocol (Redis as a
 * model: it counts the commands the protocol sends, not what the script computes), for fleets
 * this machine cannot run: Redis commands per second needed against the fleet's request rate.
 *
 * The protocol's rules, from `packages/ebb/src/redis/shared-rate.ts`: a process renews its lease
 * once every `leaseMs` while it has had a request within the last three lease periods (one
 * `EVALSHA`); a process whose lease lapsed asks for a new one with its next request (one command);
 * a throttle is reported at once, but only the first throttle a process sees in a congestion event
 * (the others carry an old epoch). Requests arrive at each process as a Poisson stream of
 * `requestsPerSecond / processes`. Not modelled: a newcomer's quicker re-asks while its share is
 * short (one or two commands on joining), and `close()` (one command when a process ends).
 *
 * So the cost is at most `processes × 1000 / leaseMs` commands a second — 2,000 for 1,000
 * processes at the default lease — however many requests they make; below that, it follows the
 * processes with traffic.
 *
 * @example
 * simulateSharedRateCost({ processes: 1000, requestsPerSecond: 50_000 }).commandsPerRequest // ≈ 0.04
 */
export function simulateSharedRateCost(options: SharedRateCostOptions): SharedRateCostResult {
  const where = 'simulateSharedRateCost()';
  const o = optionsObject(where, options) as SharedRateCostOptions;
  checkKeys(where, o, [
    'processes',
    'requestsPerSecond',
    'leaseMs',
    'durationMs',
    'eventsPerMinute',
    'throttlesPerEvent',
    'seed',
  ]);
  const processes = count(where, 'processes', o.processes, 1000, 1, false, 'Such as 1000.');
  atMost(where, 'processes', processes, SIM_LIMITS.clients, 'Such as 1000.');
  const requestsPerSecond = nonNegative(
    where,
    'requestsPerSecond',
    o.requestsPerSecond,
    Number.NaN,
    false,
    'Such as 5000.',
  );
  const leaseMs = nonNegative(where, 'leaseMs', o.leaseMs, 500, false, 'Such as 500.');
  if (leaseMs < 10) invalid(where, 'leaseMs', leaseMs, 'a finite number >= 10', 'Such as 500.');
  const durationMs = nonNegative(where, 'durationMs', o.durationMs, 60_000, false, 'Such as 60000.');
  atMost(where, 'durationMs', durationMs, SIM_LIMITS.horizonMs, 'At most a day of simulated time.');
  if (durationMs < leaseMs) invalid(where, 'durationMs', durationMs, `at least leaseMs (${leaseMs})`);
  const periods = Math.floor(durationMs / leaseMs);
  // One draw per process and lease period: bounded like the other models' station-slots.
  atMost(
    where,
    'durationMs',
    durationMs,
    Math.floor((SIM_LIMITS.stationSlots / processes) * leaseMs),
    `With ${processes} processes, processes × lease periods is bounded by ${SIM_LIMITS.stationSlots}.`,
  );
  const eventsPerMinute = nonNegative(where, 'eventsPerMinute', o.eventsPerMinute, 7.5, false, 'Such as 7.5.');
  const throttlesPerEvent = count(where, 'throttlesPerEvent', o.throttlesPerEvent, 5, 0, false, 'Such as 5.');
  atMost(where, 'throttlesPerEvent', throttlesPerEvent, SIM_LIMITS.clients, 'Such as 5.');
  const seed = count(where, 'seed', o.seed, 1, 0, false, 'Any whole number.');
  const random = seeded(seed);

  const perPeriod = (requestsPerSecond / processes) * (leaseMs / 1000);
  // Periods since each process's last request (Infinity: never), and whether it holds a lease.
  const idle = new Float64Array(processes).fill(Number.POSITIVE_INFINITY);
  const leased = new Uint8Array(processes);
  let renewals = 0;
  let resyncs = 0;
  let reports = 0;
  let live = 0;
  let eventDebt = 0;
  const eventsPerPeriod = (eventsPerMinute * leaseMs) / 60_000;
  for (let t = 0; t < periods; t++) {
    for (let i = 0; i < processes; i++) {
      const arrivals = poisson(random, perPeriod);
      if (arrivals > 0) {
        // A request with no live lease asks for one first.
        if (!leased[i]) {
          resyncs++;
          leased[i] = 1;
        }
        idle[i] = 0;
      } else idle[i] = (idle[i] as number) + 1;
      // The renewal at the end of the period, while there was traffic in the last three.
      if ((idle[i] as number) < 3) {
        if (leased[i]) renewals++;
      } else leased[i] = 0;
      live += leased[i] as number;
    }
    eventDebt += eventsPerPeriod;
    while (eventDebt >= 1) {
      eventDebt -= 1;
      // The event's 429s land on random processes; each reports its first one only.
      const seen = new Set<number>();
      for (let k = 0; k < throttlesPerEvent; k++) seen.add(Math.floor(random() * processes));
      reports += seen.size;
    }
  }
  const seconds = (periods * leaseMs) / 1000;
  const commands = renewals + resyncs + reports;
  return {
    processes,
    requestsPerSecond,
    commandsPerSecond: commands / seconds,
    renewalsPerSecond: renewals / seconds,
    resyncsPerSecond: resyncs / seconds,
    throttleReportsPerSecond: reports / seconds,
    commandsPerRequest: requestsPerSecond === 0 ? 0 : commands / seconds / requestsPerSecond,
    meanLiveLeases: live / periods,
  };
}
