export interface RateProcessReport {
  readonly ok: number[];
  readonly throttled: number[];
  readonly otherStatus: number[];
  readonly outcome: { ok: number; final429: number; otherResponse: number; errors: Record<string, number> };
  readonly logical: number;
  readonly stats: {
    mode: string;
    commands: number;
    errors: number;
    fallbacks: number;
    resyncs: number;
    throttlesSent: number;
    repairs: number;
    stateLosses: number;
    staleThrottles: number;
  };
  readonly events: { type: string; t: number }[];
  readonly trace: { t: number; rate: number }[];
  /** Every 250 ms: [s since the process's start, the fleet's rate as heard, the epoch]. */
  readonly fleetTrace?: [number, number, number][];
  /** Every 429: [s since the process's start, the ticket's fleet epoch]. */
  readonly throttles: [number, number | null][];
  /** With EBB_TRACE_GRANTS=1: every grant's wall-clock time (ms) and its status (200 or 429). */
  readonly grants?: [number, number][];
  /** The process's start, ms since the epoch. */
  readonly startWall: number;
  readonly lateMs: number;
  readonly atS: number;
  readonly seconds: number;
}
/** What throttle-process.mjs reports (see there). */
export interface ThrottleProcessReport {
  readonly asked: number[];
  readonly local: number[];
  readonly sent: number[];
  readonly ok: number[];
  readonly throttled: number[];
  readonly errors: Record<string, number>;
  readonly view: {
    t: number;
    requests: number;
    accepts: number;
    p: number;
    mode: string;
    ownAsked: number;
    ownAccepted: number;
  }[];
  readonly own: { asked: number; accepted: number };
  readonly longestAcquireMs: number;
  readonly promises: number;
  readonly stats?: { mode: string; commands: number; errors: number; fallbacks: number; resyncs: number };
  readonly events: { type: string; t: number }[];
  readonly startWall: number;
  readonly atS: number;
  readonly seconds: number;
}
export function runRateFleet(options: {
  process: 'throttle';
  url: string;
  redisUrl?: string;
  name: string;
  kind: 'shared' | 'local';
  members: { atS: number; seconds: number; library?: 'node-redis' | 'ioredis' }[];
  /** Each process's offered requests a second. */
  clients: number;
  leadMs?: number;
  /** k, windowMs */
  extra?: (string | number)[];
  onStart?: (startMs: number) => void;
}): Promise<ThrottleProcessReport[]>;
export function runRateFleet(options: {
  process?: 'rate';
  extra?: (string | number)[];
  onStart?: (startMs: number) => void;
  url: string;
  redisUrl?: string;
  name: string;
  kind: 'shared' | 'local';
  members: { atS: number; seconds: number; library?: 'node-redis' | 'ioredis' }[];
  clients?: number;
  leadMs?: number;
  initialRatePerSecond?: number;
  env?: Record<string, string>;
}): Promise<RateProcessReport[]>;
export function onFleetClock(report: RateProcessReport, key: 'ok' | 'throttled'): number[];
export function total(series: number[], from: number, to: number): number;
export function jain(xs: number[]): number;
export interface FleetSummary {
  readonly ok: number[];
  readonly throttled: number[];
  readonly convergedAtS: number | null;
  readonly acceptedPerSecond: number;
  readonly ofLimit: number;
  readonly throttledShare: number;
  readonly perProcess: number[];
  readonly jain: number;
}
export function summarize(
  reports: RateProcessReport[],
  limit: number,
  span: { from: number; to: number },
): FleetSummary;

/** In a member process: prints `ready` and resolves with the fleet's start (ms since the epoch) read from stdin. */
export function readyForStart(): Promise<number>;
