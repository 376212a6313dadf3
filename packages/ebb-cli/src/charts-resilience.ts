// Charts of the resilience scenarios: `ebb simulate outage`, `brownout` and `slow-tail`.
import { type ChartSpec, document, HEIGHT, type Row, WIDTH } from './charts-spec.js';

/** Colours of the resilience scenarios: "none" red as in the other charts, mechanisms after it. */
function subjectScale(subjects: readonly string[]): { domain: string[]; range: string[] } {
  const palette = ['#4c78a8', '#54a24b', '#f58518', '#b279a2', '#72b7b2', '#9d755d'];
  let next = 0;
  return {
    domain: [...subjects],
    range: subjects.map((s) =>
      s === 'none' ? '#e45756' : s === 'unloaded' ? '#bab0ac' : (palette[next++ % palette.length] as string),
    ),
  };
}

/** Two panels side by side under one title, one legend: the same mechanism, the same colour. */
function concat(title: string, subtitle: string, left: ChartSpec, right: ChartSpec): ChartSpec {
  return document(title, subtitle, { hconcat: [left, right] });
}

/** A time-series panel: one step line per subject, optional shaded span (an outage). */
function timePanel(
  values: Row[],
  y: { title: string; format?: string; scale?: Record<string, unknown>; values?: number[] },
  scale: { domain: string[]; range: string[] },
  xTitle: string,
  shade?: { fromS: number; toS: number },
): ChartSpec {
  return {
    width: WIDTH,
    height: HEIGHT,
    layer: [
      ...(shade
        ? [
            {
              data: { values: [{ from: shade.fromS, to: shade.toS }] },
              mark: { type: 'rect', color: '#d62728', opacity: 0.08 },
              encoding: { x: { field: 'from', type: 'quantitative' }, x2: { field: 'to' } },
            },
          ]
        : []),
      {
        data: { values },
        mark: { type: 'line', strokeWidth: 1.5, interpolate: 'step-after' },
        encoding: {
          x: { field: 's', type: 'quantitative', title: xTitle },
          y: {
            field: 'value',
            type: 'quantitative',
            title: y.title,
            ...(y.scale ? { scale: y.scale } : {}),
            ...(y.format || y.values
              ? { axis: { ...(y.format ? { format: y.format } : {}), ...(y.values ? { values: y.values } : {}) } }
              : {}),
          },
          color: { field: 'subject', type: 'nominal', title: 'mechanism', scale },
        },
      },
    ],
  };
}

/** `ebb simulate outage`: requests reaching the service and successful calls over time, with and without the breaker. */
export function outageChart(doc: {
  workers: number;
  outageStartMs: number;
  outageMs: number;
  results: readonly {
    subject: string;
    deadRequests: number;
    series: readonly { startMs: number; requestsPerSecond: number; successesPerSecond: number }[];
  }[];
}): ChartSpec {
  const requests: Row[] = [];
  const successes: Row[] = [];
  for (const r of doc.results) {
    for (const b of r.series) {
      requests.push({ s: b.startMs / 1000, value: b.requestsPerSecond, subject: r.subject });
      successes.push({ s: b.startMs / 1000, value: b.successesPerSecond, subject: r.subject });
    }
  }
  const scale = subjectScale(doc.results.map((r) => r.subject));
  const shade = { fromS: doc.outageStartMs / 1000, toS: (doc.outageStartMs + doc.outageMs) / 1000 };
  const dead = doc.results.map((r) => `${r.subject}: ${r.deadRequests}`).join(', ');
  return concat(
    `${doc.workers} workers through an outage of ${doc.outageMs / 1000} s`,
    `requests that reached the dead service — ${dead}; every call through ebb's retry()`,
    timePanel(
      requests,
      { title: 'requests reaching the service (per second)', scale: { type: 'symlog' }, values: [0, 1, 10, 100, 1000] },
      scale,
      'time (s); shaded: outage',
      shade,
    ),
    timePanel(successes, { title: 'successful calls (per second)' }, scale, 'time (s); shaded: outage', shade),
  );
}

/** `ebb simulate brownout`: goodput and p99 latency over time, with and without the concurrency limit. */
export function brownoutChart(doc: {
  capacity: number;
  serviceMs: number;
  load: number;
  results: readonly {
    subject: string;
    series: readonly { startMs: number; goodput: number; p99Ms: number | null }[];
  }[];
}): ChartSpec {
  const goodput: Row[] = [];
  const p99: Row[] = [];
  for (const r of doc.results) {
    for (const b of r.series) {
      goodput.push({ s: b.startMs / 1000, value: b.goodput, subject: r.subject });
      if (b.p99Ms !== null) p99.push({ s: b.startMs / 1000, value: b.p99Ms, subject: r.subject });
    }
  }
  const scale = subjectScale(doc.results.map((r) => r.subject));
  return concat(
    `A brownout: ${doc.load} × the capacity of ${doc.capacity} × ${doc.serviceMs} ms`,
    "the server thrashes (10× slower) once its queue outgrows its capacity; 'unloaded' runs at ½ capacity",
    timePanel(goodput, { title: 'goodput (share of capacity)', format: '.0%' }, scale, 'time (s)'),
    timePanel(p99, { title: 'p99 latency of successes (ms)', scale: { type: 'log' } }, scale, 'time (s)'),
  );
}

/** Percentiles the slow-tail chart plots. */
const TAIL_QUANTILES = [0.5, 0.75, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999];

/** `ebb simulate slow-tail`: the latency percentiles with and without hedging, and the extra requests. */
export function slowTailChart(doc: {
  serviceMs: number;
  serviceSigma?: number;
  slowShare: number;
  slowFactor: number;
  results: readonly { subject: string; extraRequests: number; latenciesMs: readonly number[] }[];
}): ChartSpec {
  const values: Row[] = [];
  for (const r of doc.results) {
    const n = r.latenciesMs.length;
    if (n === 0) continue;
    for (const q of TAIL_QUANTILES) {
      const v = r.latenciesMs[Math.min(n - 1, Math.floor(q * n))] as number;
      values.push({ q: `p${+(q * 100).toFixed(1)}`, order: q, value: v, subject: r.subject });
    }
  }
  const scale = subjectScale(doc.results.map((r) => r.subject));
  const extra = doc.results.map((r) => `${r.subject} ${(r.extraRequests * 100).toFixed(1)} %`).join(', ');
  return document(
    `A slow tail: ${doc.slowShare * 100} % of responses ${doc.slowFactor}× slower than ${doc.serviceMs} ms${doc.serviceSigma ? ` (log-normal, σ ${doc.serviceSigma})` : ''}`,
    `extra requests — ${extra}`,
    {
      width: WIDTH,
      height: HEIGHT,
      data: { values },
      mark: { type: 'line', strokeWidth: 1.5, point: { filled: true, size: 50 } },
      encoding: {
        x: {
          field: 'q',
          type: 'ordinal',
          title: 'percentile of call latency',
          sort: { field: 'order' },
          axis: { labelAngle: 0 },
        },
        y: { field: 'value', type: 'quantitative', title: 'latency (ms)', scale: { type: 'log' } },
        color: { field: 'subject', type: 'nominal', title: 'mechanism', scale },
      },
    },
  );
}
