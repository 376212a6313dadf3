// Charts of the retry models: `ebb simulate delays`, `contention` and `overload`.
import { type ChartSpec, document, HEIGHT, lines, pair, type Row, strategyScale, WIDTH } from './charts-spec.js';

/** `ebb simulate delays`: the sampled spread of each wait against the exact mean and bounds. */
export function delaysChart(doc: {
  name: string;
  runs: number;
  rows: readonly {
    attempt: number;
    p05Ms: number;
    p50Ms: number;
    p95Ms: number;
    meanMs: number;
    minMs: number;
    maxMs: number;
  }[];
}): ChartSpec {
  const series: [string, keyof (typeof doc.rows)[number]][] = [
    ['sampled 5th percentile', 'p05Ms'],
    ['sampled median', 'p50Ms'],
    ['sampled 95th percentile', 'p95Ms'],
    ['exact mean', 'meanMs'],
    ['exact min', 'minMs'],
    ['exact max', 'maxMs'],
  ];
  const values = doc.rows.flatMap((r) =>
    series.map(([label, key]) => ({ attempt: r.attempt, ms: r[key], series: label })),
  );
  const band = {
    data: { values: doc.rows.map((r) => ({ attempt: r.attempt, low: r.p05Ms, high: r.p95Ms })) },
    mark: { type: 'area', opacity: 0.15, color: '#4c78a8' },
    encoding: {
      x: { field: 'attempt', type: 'quantitative' },
      y: { field: 'low', type: 'quantitative' },
      y2: { field: 'high' },
    },
  };
  return document(
    `Delay distribution of ${doc.name}`,
    `${doc.runs.toLocaleString('en-US')} sampled runs of the real policy (band: 5th–95th percentile) against describePolicy()'s exact values`,
    lines(
      values,
      { field: 'attempt', title: 'failed attempt (row)' },
      { field: 'ms', title: 'wait before the next attempt (ms)' },
      { field: 'series', title: 'value' },
      [band],
    ),
  );
}

/** Brooker's experiment: calls and completion time per strategy (bars), or against clients (lines). */
export function contentionChart(doc: {
  points: readonly { clients: number; results: readonly { strategy: string; calls: number; timeMs: number }[] }[];
  runs: number;
}): ChartSpec {
  const rows = doc.points.flatMap((p) => p.results.map((r) => ({ clients: p.clients, ...r })));
  const scale = strategyScale(rows.map((r) => r.strategy));
  const subtitle = `optimistic-concurrency writes to one row, network |N(10, 2)| ms, mean of ${doc.runs} runs (Brooker, AWS Architecture Blog, 2015)`;
  if (doc.points.length > 1) {
    return pair(
      'Contending clients: work and time per backoff strategy',
      subtitle,
      lines(
        rows,
        { field: 'clients', title: 'clients' },
        { field: 'calls', title: 'calls (writes sent)' },
        { field: 'strategy', title: 'strategy', scale },
      ),
      lines(
        rows,
        { field: 'clients', title: 'clients' },
        { field: 'timeMs', title: 'time until the last client is done (ms)' },
        { field: 'strategy', title: 'strategy', scale },
      ),
    );
  }
  const bar = (field: string, title: string): ChartSpec => ({
    width: 300,
    height: HEIGHT,
    data: { values: rows },
    mark: 'bar',
    encoding: {
      x: { field: 'strategy', type: 'nominal', title: null, sort: scale.domain, axis: { labelAngle: -30 } },
      y: { field, type: 'quantitative', title },
      color: { field: 'strategy', type: 'nominal', title: 'strategy', scale },
    },
  });
  return document(`${doc.points[0]?.clients} contending clients: work and time per backoff strategy`, subtitle, {
    hconcat: [bar('calls', 'calls (writes sent)'), bar('timeMs', 'time until the last client is done (ms)')],
  });
}

/** The overload time series: offered load per strategy against capacity, and clients served. */
export function overloadChart(doc: {
  clients: number;
  capacityPerSecond: number;
  outageMs: number;
  results: readonly {
    strategy: string;
    series: readonly { startMs: number; offeredPerSecond: number; clientsServed: number }[];
  }[];
}): ChartSpec {
  const load: Row[] = [];
  const served: Row[] = [];
  for (const r of doc.results) {
    for (const b of r.series) {
      load.push({ s: b.startMs / 1000, value: b.offeredPerSecond, strategy: r.strategy });
      served.push({ s: b.startMs / 1000, value: b.clientsServed / doc.clients, strategy: r.strategy });
    }
  }
  const outage = {
    data: { values: [{ from: 0, to: doc.outageMs / 1000 }] },
    mark: { type: 'rect', color: '#d62728', opacity: 0.08 },
    encoding: { x: { field: 'from', type: 'quantitative' }, x2: { field: 'to' } },
  };
  const capacity = {
    data: { values: [{ capacity: doc.capacityPerSecond }] },
    mark: { type: 'rule', color: '#333', strokeDash: [2, 2] },
    encoding: { y: { field: 'capacity', type: 'quantitative' } },
  };
  const label = {
    data: {
      values: [{ s: doc.outageMs / 2000, y: doc.capacityPerSecond, text: `capacity ${doc.capacityPerSecond}/s` }],
    },
    mark: { type: 'text', dy: -7, fontSize: 11, color: '#333' },
    encoding: {
      x: { field: 's', type: 'quantitative' },
      y: { field: 'y', type: 'quantitative' },
      text: { field: 'text' },
    },
  };
  const panel = (values: Row[], title: string, format: string | undefined, extra: ChartSpec[]): ChartSpec => ({
    width: WIDTH,
    height: HEIGHT,
    layer: [
      ...extra.slice(0, 1),
      {
        data: { values },
        mark: { type: 'line', strokeWidth: 1.5, interpolate: 'step-after' },
        encoding: {
          x: { field: 's', type: 'quantitative', title: 'time (s); shaded: outage' },
          y: { field: 'value', type: 'quantitative', title, ...(format ? { axis: { format } } : {}) },
          color: { field: 'strategy', type: 'nominal', title: 'strategy' },
        },
      },
      ...extra.slice(1),
    ],
  });
  return document(
    `${doc.clients} clients against a recovering service`,
    `down for ${doc.outageMs / 1000} s, then ${doc.capacityPerSecond} requests/s with a queue; every client driven by ebb's retry()`,
    {
      hconcat: [
        panel(load, 'requests reaching the server (per second)', undefined, [outage, capacity, label]),
        panel(served, 'clients served', '.0%', [outage]),
      ],
    },
  );
}
