/**
 * The `q` quantile of ascending `sorted` values by the nearest-rank rule (the value below which
 * `q` of them fall), or null for none. @internal
 */
export function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** Latency percentiles of a run, ms; null when nothing succeeded. */
export interface LatencySummary {
  readonly p50Ms: number | null;
  readonly p95Ms: number | null;
  readonly p99Ms: number | null;
  readonly maxMs: number | null;
}

/** Percentiles of `values` (sorted here, in place). @internal */
export function summarize(values: number[]): LatencySummary {
  values.sort((a, b) => a - b);
  return {
    p50Ms: quantile(values, 0.5),
    p95Ms: quantile(values, 0.95),
    p99Ms: quantile(values, 0.99),
    maxMs: values.length === 0 ? null : (values[values.length - 1] as number),
  };
}

/** Adds one to the bin of time `t`. @internal */
export function bump(bins: number[], binMs: number, t: number): void {
  const b = Math.floor(t / binMs);
  bins[b] = (bins[b] ?? 0) + 1;
}
