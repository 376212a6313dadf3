// How long a run of `ebb simulate` will take, estimated before it starts: the work of each of its
// simulator runs in the model's own unit, and how much of that unit a second of a machine gets
// through. The CLI warns before a run estimated to take longer than WARN_AFTER_SECONDS, and its
// progress bar weighs each simulator run by its estimated work.
import type { Backoff } from 'ebb';
import { simulateContention } from 'ebb/sim';
import { formatDuration } from './duration.js';

/** A model's unit of work, and what a second gets through. */
export interface WorkUnit {
  /** The unit, in words: "simulated requests". */
  readonly name: string;
  /**
   * Units a second, the slowest of several sizes measured by `node bench/figures/cli-cost.mjs` on
   * a 2-core x86-64 machine under a load average of 2.3 (Node 20), rounded down: a faster machine
   * finishes sooner than warned, a slower one later.
   */
  readonly perSecond: number;
}

/** Each model's unit of work (see the CLI README, "How long a simulation takes"). */
export const WORK = {
  // The requests the clients send (ebb/sim's estimateOverloadRequests): 56,000–96,000 a second.
  overload: { name: 'simulated requests', perSecond: 50_000 },
  // The writes (Brooker's "calls"), extrapolated from pilot runs: 0.8–1.4 million a second.
  contention: { name: 'simulated writes', perSecond: 800_000 },
  // Slots × stations (at least 50: a slot costs something however few stations there are).
  ethernet: { name: 'station-slots', perSecond: 400_000_000 },
  wifi: { name: 'station-slots', perSecond: 400_000_000 },
  // The calls the workers could make: workers × duration ÷ (think + 5 ms), each of 2 runs.
  outage: { name: 'simulated calls', perSecond: 60_000 },
  // The arrivals: load × capacity ÷ service time × duration, each run.
  brownout: { name: 'simulated calls', perSecond: 18_000 },
  // The calls the workers could make: workers × duration ÷ service time, each of 3 runs.
  'slow-tail': { name: 'simulated calls', perSecond: 500_000 },
  // The calls of the processes: processes × calls a second × duration, each of 2 runs (shared, local).
  'fleet-breaker': { name: 'simulated calls', perSecond: 50_000 },
  // Draws: runs × rows.
  delays: { name: 'draws', perSecond: 5_000_000 },
} as const satisfies Record<string, WorkUnit>;

/** A model of `ebb simulate`. */
export type Model = keyof typeof WORK;

/** Runs estimated to take longer than this many seconds are announced before they start. */
export const WARN_AFTER_SECONDS = 10;

/** What a run of a model will do: the estimated work of each simulator run, in order. */
export interface RunPlan {
  readonly model: Model;
  readonly parts: readonly number[];
  /** What each run is, for the warning when one is most (three fifths) of the work: "none at 2000 clients". */
  readonly names?: readonly string[];
  /** The flags that make the run smaller, for the warning: "--clients". */
  readonly smaller: string;
}

/** The estimated seconds of a plan on the machine {@link WORK} was measured on. */
export function plannedSeconds(plan: RunPlan): number {
  const unit: WorkUnit = WORK[plan.model];
  return plan.parts.reduce((a, b) => a + b, 0) / unit.perSecond;
}

/**
 * The line printed on stderr before a long run, or undefined for a short one — and for an
 * estimate that is not a finite number, which tells no time: the models refuse a zero that their
 * sizes are divided by (`--service 0ms`) before estimating, and the simulators refuse runs past
 * their limits, so such a run never starts.
 */
export function longRunWarning(plan: RunPlan): string | undefined {
  const seconds = plannedSeconds(plan);
  if (!(seconds > WARN_AFTER_SECONDS) || !Number.isFinite(seconds)) return undefined;
  const unit: WorkUnit = WORK[plan.model];
  const work = plan.parts.reduce((a, b) => a + b, 0);
  const about = seconds < 60 ? `${Math.round(seconds)} s` : formatDuration(Math.round(seconds / 60) * 60_000);
  const heaviest = plan.parts.indexOf(Math.max(...plan.parts));
  const most =
    plan.names !== undefined && plan.parts.length > 1 && (plan.parts[heaviest] as number) > 0.6 * work
      ? `, most of it ${plan.names[heaviest]}`
      : '';
  return `ebb: this run will take about ${about} (about ${amount(work)} ${unit.name}${most}); ${plan.smaller} make it shorter, Ctrl-C stops it`;
}

/** 2.9 million, 480,000, 1,200. */
export function amount(n: number): string {
  if (n >= 1e9) return `${Number((n / 1e9).toPrecision(2))} billion`;
  if (n >= 1e6) return `${Number((n / 1e6).toPrecision(2))} million`;
  return Math.round(Number(n.toPrecision(2))).toLocaleString('en-US');
}

/** The work of a slotted run: slots × stations, the stations counted as at least 50. */
export function stationSlots(stations: number, slots: number): number {
  return slots * Math.max(stations, 50);
}

/** Pilot crowds of the contention model's estimate. */
const PILOT = { small: 100, large: 200, runs: 2 } as const;

/**
 * The writes one run of the contention model makes with `clients` clients and one strategy:
 * measured on pilot crowds of 100 and 200 clients (two runs each, a few milliseconds), and
 * extrapolated as writes ∝ clients^b, with b the growth between the two pilots, held within
 * [1, 2] (every client writes at least once; with no backoff at all each write meets the whole
 * crowd). Smaller crowds are measured directly.
 */
export function contentionWrites(clients: number, policy: Backoff): number {
  const writes = (n: number) =>
    simulateContention({ clients: n, runs: PILOT.runs, strategies: { s: policy }, seed: 1 })[0]?.calls ?? n;
  if (clients <= PILOT.large) return writes(clients);
  const small = writes(PILOT.small);
  const large = writes(PILOT.large);
  const b = Math.min(2, Math.max(1, Math.log2(large / small)));
  return large * (clients / PILOT.large) ** b;
}
