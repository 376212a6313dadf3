export interface FleetResult {
  readonly seconds: number;
  /** 200s, 429s and other statuses per second, per attempt. */
  readonly ok: number[];
  readonly throttled: number[];
  readonly otherStatus: number[];
  /** How the logical requests ended. */
  readonly outcome: { ok: number; final429: number; otherResponse: number; errors: Record<string, number> };
  readonly logical: number;
  readonly sent: number;
  readonly classes: Record<string, { requests: number; ok: number; failed: number }>;
  readonly trace: { t: number; rate: number }[];
  readonly cuts: { t: number; from: number; to: number }[];
}
export interface Controller {
  acquire(signal?: AbortSignal): unknown;
  record(outcome: 'success' | 'throttled' | 'failure', ticket?: unknown, detail?: unknown): void;
  readonly ratePerSecond: number;
  priority?(name: string): Controller;
}
export function runFleet(options: {
  url: (path: string) => string;
  path?: (tSeconds: number) => string;
  rate?: Controller;
  clients?: number;
  offeredPerSecond?: number;
  classOf?: (i: number) => string;
  deadlineMs?: number;
  seconds: number;
  sampleMs?: number;
  /** A closed-loop client whose request ended in an error waits this long before its next. Default 100. */
  pauseOnErrorMs?: number;
  /** The fetch the fleet's withRetry wraps. Default the global fetch. */
  fetchImpl?: typeof fetch;
}): Promise<FleetResult>;
export function sum(series: number[], from?: number, to?: number): number;
export function cv(series: number[], from: number, to: number): number;
export function jain(xs: number[]): number;
