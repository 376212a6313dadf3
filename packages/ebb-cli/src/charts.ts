/**
 * Chart specifications for `ebb simulate --svg/--png`: Vega-Lite 5 documents built from the
 * same data the command prints with `--json`. Each has a title, axes with units and a legend.
 * Rendering (Vega → SVG, resvg → PNG) lives in charts-render.ts.
 */

/** A Vega-Lite specification (kept loose: it is JSON handed to the compiler). */
export type ChartSpec = Record<string, unknown>;

type Row = Record<string, number | string | null>;

const WIDTH = 420;
const HEIGHT = 260;

/** Shared look: a white background, DejaVu Sans (what resvg finds on Debian), readable sizes. */
const CONFIG = {
  background: 'white',
  font: 'DejaVu Sans',
  title: { fontSize: 15, anchor: 'start', subtitleFontSize: 11, subtitleColor: '#555' },
  axis: { labelFontSize: 11, titleFontSize: 12, grid: true },
  legend: {
    labelFontSize: 11,
    titleFontSize: 12,
    orient: 'bottom',
    direction: 'horizontal',
    // Two columns keep a legend of long labels no wider than its panel: wider, it would widen the
    // canvas and leave a blank margin right of the plot.
    columns: 2,
    labelLimit: 260,
  },
  view: { stroke: '#ccc' },
};

function document(title: string, subtitle: string, body: ChartSpec): ChartSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: title, subtitle },
    config: CONFIG,
    ...body,
  };
}

/**
 * The strategies of `ebb simulate contention` in a fixed order with fixed colours (Tableau 10),
 * so that a strategy has the same colour in the bar chart and in the `--sweep-clients` lines.
 * Other strategies (presets) take the remaining colours in name order.
 */
const STRATEGY_COLORS: Readonly<Record<string, string>> = {
  none: '#e45756',
  exponential: '#f58518',
  full: '#4c78a8',
  equal: '#72b7b2',
  decorrelated: '#54a24b',
};
const SPARE_COLORS = ['#b279a2', '#ff9da6', '#9d755d', '#bab0ac', '#eeca3b'];

/** The colour scale of a set of strategies: the same strategy, the same colour, in every chart. */
export function strategyScale(strategies: Iterable<string>): { domain: string[]; range: string[] } {
  const names = [...new Set(strategies)];
  const known = Object.keys(STRATEGY_COLORS).filter((k) => names.includes(k));
  const others = names.filter((n) => !(n in STRATEGY_COLORS)).sort();
  const domain = [...known, ...others];
  return {
    domain,
    range: domain.map(
      (n, i) => STRATEGY_COLORS[n] ?? (SPARE_COLORS[(i - known.length) % SPARE_COLORS.length] as string),
    ),
  };
}

/**
 * An x encoding. Whole-number fields (rows, attempts, stations, ceilings) get whole-number ticks:
 * left to itself, Vega puts ticks at 1.0, 1.4, 1.8 on an axis of three rows.
 */
function xEncoding(values: readonly Row[], x: { field: string; title: string; type?: 'quantitative' | 'ordinal' }) {
  const type = x.type ?? 'quantitative';
  const xs = values.map((v) => v[x.field]).filter((v) => v !== null && v !== undefined);
  const whole = type === 'quantitative' && xs.every((v) => Number.isInteger(v));
  if (!whole) return { field: x.field, type, title: x.title };
  // A tick at each value when there are few (every row, every station count), else whole steps.
  const distinct = [...new Set(xs as number[])].sort((a, b) => a - b);
  const axis = distinct.length <= 16 ? { values: distinct, format: 'd' } : { tickMinStep: 1, format: 'd' };
  return { field: x.field, type, title: x.title, axis };
}

/**
 * A line (with points) panel: y against x, one line per `series`, colored with a legend. Series
 * that `analytic` picks (a model's prediction) are drawn first, as wide translucent dashed lines,
 * and the simulated ones over them with solid points: where simulation and model agree, both stay
 * visible instead of one hiding under the other.
 */
function lines(
  values: Row[],
  x: { field: string; title: string; type?: 'quantitative' | 'ordinal' },
  y: { field: string; title: string; scale?: Record<string, unknown>; format?: string },
  series: { field: string; title: string; scale?: { domain: string[]; range: string[] } },
  extra: ChartSpec[] = [],
  analytic?: (name: string) => boolean,
): ChartSpec {
  const encoding = {
    x: xEncoding(values, x),
    y: {
      field: y.field,
      type: 'quantitative',
      title: y.title,
      ...(y.scale ? { scale: y.scale } : {}),
      ...(y.format ? { axis: { format: y.format } } : {}),
    },
    color: {
      field: series.field,
      type: 'nominal',
      title: series.title,
      ...(series.scale ? { scale: series.scale } : {}),
    },
  };
  if (analytic) {
    const model = values.filter((v) => analytic(String(v[series.field])));
    const simulated = values.filter((v) => !analytic(String(v[series.field])));
    return {
      width: WIDTH,
      height: HEIGHT,
      layer: [
        {
          data: { values: model },
          mark: { type: 'line', strokeWidth: 5, opacity: 0.45, strokeDash: [8, 5] },
          encoding,
        },
        {
          data: { values: simulated },
          mark: { type: 'line', strokeWidth: 1.5, point: { filled: true, size: 60 } },
          encoding,
        },
        ...extra,
      ],
    };
  }
  return {
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        data: { values },
        mark: { type: 'line', point: true, strokeWidth: 2 },
        encoding: {
          ...encoding,
          strokeDash: {
            field: series.field,
            type: 'nominal',
            title: series.title,
            // The same domain as the colours, so that one legend shows both.
            ...(series.scale ? { scale: { domain: series.scale.domain } } : {}),
          },
        },
      },
      ...extra,
    ],
  };
}

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
    `${doc.runs.toLocaleString('en-US')} sampled runs of the real policy (band: 5th–95th percentile) against describe()'s exact values`,
    lines(
      values,
      { field: 'attempt', title: 'failed attempt (row)' },
      { field: 'ms', title: 'wait before the next attempt (ms)' },
      { field: 'series', title: 'value' },
      [band],
    ),
  );
}

/** Two panels side by side under one title. */
function pair(title: string, subtitle: string, left: ChartSpec, right: ChartSpec): ChartSpec {
  return document(title, subtitle, {
    hconcat: [left, right],
    resolve: { scale: { color: 'independent', strokeDash: 'independent' } },
  });
}

/** The series that are a model's prediction rather than a simulation's measurement. */
const isModel = (name: string): boolean => name.startsWith('Bianchi') || name.startsWith('E(c)');

/** Throughput and delay against the number of stations: simulation and, for Wi-Fi, Bianchi's model. */
export function stationsChart(doc: { model: 'wifi' | 'ethernet'; points: readonly object[] }): ChartSpec {
  const wifi = doc.model === 'wifi';
  const throughput: Row[] = [];
  const delay: Row[] = [];
  for (const point of doc.points) {
    const p = point as Record<string, unknown>;
    const stations = p.stations as number;
    if (wifi) {
      const b = p.bianchi as Record<string, number>;
      throughput.push({ stations, value: p.throughput as number, series: 'simulated' });
      throughput.push({ stations, value: b.throughput as number, series: 'Bianchi (2000)' });
      delay.push({ stations, value: p.meanDelayMs as number, series: 'simulated mean' });
      delay.push({ stations, value: p.p99DelayMs as number, series: 'simulated 99th percentile' });
      delay.push({ stations, value: b.meanDelayMs as number, series: 'Bianchi mean' });
    } else {
      throughput.push({ stations, value: p.throughput as number, series: 'throughput' });
      throughput.push({ stations, value: p.collisionProbability as number, series: 'collision probability' });
      delay.push({ stations, value: p.meanLatencySlots as number, series: 'mean' });
      delay.push({ stations, value: p.p99LatencySlots as number, series: '99th percentile' });
    }
  }
  const title = wifi
    ? '802.11 DCF in saturation: throughput and delay against stations'
    : '802.3 CSMA/CD in saturation: throughput and latency against stations';
  const subtitle = wifi
    ? "ebb's slot simulation beside the fixed point of Bianchi's model (IEEE JSAC 2000)"
    : 'slotted CSMA/CD with truncated binary exponential backoff, every station always sending';
  return pair(
    title,
    subtitle,
    lines(
      throughput,
      { field: 'stations', title: 'stations' },
      { field: 'value', title: wifi ? 'throughput (share of channel time)' : 'share', format: '.0%' },
      { field: 'series', title: '' },
      [],
      wifi ? isModel : undefined,
    ),
    lines(
      delay,
      { field: 'stations', title: 'stations' },
      { field: 'value', title: wifi ? 'frame delay (ms)' : 'frame latency (slots)' },
      { field: 'series', title: '' },
      [],
      wifi ? isModel : undefined,
    ),
  );
}

/** The ceiling sweep: collisions fall, the latency range grows. */
export function ceilingChart(doc: {
  stations: number;
  thinkSlots: number;
  points: readonly {
    ceiling: number | null;
    collisionProbability: number;
    throughput: number;
    meanLatencySlots: number;
    p99LatencySlots: number;
    maxLatencySlots: number;
    latencyStdDevSlots: number;
    successes: number;
  }[];
}): ChartSpec {
  const share: Row[] = [];
  const latency: Row[] = [];
  for (const p of doc.points) {
    share.push({ ceiling: p.ceiling, value: p.collisionProbability, series: 'collision probability' });
    share.push({ ceiling: p.ceiling, value: p.throughput, series: 'throughput' });
    if (p.successes === 0) continue;
    for (const [series, value] of [
      ['mean', p.meanLatencySlots],
      ['standard deviation', p.latencyStdDevSlots],
      ['max', p.maxLatencySlots],
    ] as const) {
      if (value > 0) latency.push({ ceiling: p.ceiling, value, series });
    }
  }
  return pair(
    `Choosing the backoff ceiling: ${doc.stations} 802.3 stations`,
    `a higher ceiling means fewer collisions, but a less predictable latency (${doc.thinkSlots === 0 ? 'saturated' : `${doc.thinkSlots} idle slots between frames on average`}, attempt limit 16)`,
    lines(
      share,
      { field: 'ceiling', title: 'ceiling (collisions after which the window stops doubling)' },
      { field: 'value', title: 'share', format: '.0%' },
      { field: 'series', title: '' },
    ),
    lines(
      latency,
      { field: 'ceiling', title: 'ceiling' },
      { field: 'value', title: 'frame latency (slots, log scale)', scale: { type: 'log' } },
      { field: 'series', title: 'latency' },
    ),
  );
}

/** One Ethernet run: the mean backoff drawn after c collisions against E(c). */
export function backoffChart(doc: {
  stations: number;
  backoffByCollisions: readonly { collisions: number; meanSlots: number; expectedSlots: number }[];
}): ChartSpec {
  const values = doc.backoffByCollisions.flatMap((b) => [
    { collisions: b.collisions, value: b.meanSlots, series: 'simulated mean' },
    { collisions: b.collisions, value: b.expectedSlots, series: 'E(c) = (2^min(c,10) − 1)/2' },
  ]);
  return document(
    `Mean backoff after c collisions: ${doc.stations} saturated 802.3 stations`,
    'waits drawn by ebb.slotted() during the simulation, against the expected backoff',
    lines(
      values.filter((v) => v.value > 0),
      { field: 'collisions', title: 'collisions of the frame (c)' },
      { field: 'value', title: 'mean backoff (slots, log scale)', scale: { type: 'log' } },
      { field: 'series', title: '' },
      [],
      isModel,
    ),
  );
}

/** One Wi-Fi run: the simulation beside Bianchi's model. */
export function wifiChart(doc: {
  stations: number;
  cwMin: number;
  stages: number;
  transmitProbability: number;
  collisionProbability: number;
  throughput: number;
  bianchi: { transmitProbability: number; collisionProbability: number; throughput: number };
}): ChartSpec {
  const values: Row[] = [];
  for (const [metric, sim, model] of [
    ['τ (transmit, per slot)', doc.transmitProbability, doc.bianchi.transmitProbability],
    ['p (collision)', doc.collisionProbability, doc.bianchi.collisionProbability],
    ['S (throughput)', doc.throughput, doc.bianchi.throughput],
  ] as const) {
    values.push({ metric, value: sim, source: 'simulated' }, { metric, value: model, source: 'Bianchi (2000)' });
  }
  return document(
    `802.11 DCF, ${doc.stations} saturated stations, CWmin ${doc.cwMin}, m = ${doc.stages}`,
    "ebb's slot simulation beside the fixed point of Bianchi's model",
    {
      // Wide enough for "τ (transmit, per slot)" under its pair of bars, with no limit to cut it.
      width: 480,
      height: HEIGHT,
      data: { values },
      mark: 'bar',
      encoding: {
        x: { field: 'metric', type: 'nominal', title: null, axis: { labelAngle: 0, labelLimit: 0 } },
        xOffset: { field: 'source' },
        y: { field: 'value', type: 'quantitative', title: 'probability or share' },
        color: { field: 'source', type: 'nominal', title: '' },
      },
    },
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
    `A slow tail: ${doc.slowShare * 100} % of responses ${doc.slowFactor}× slower than ${doc.serviceMs} ms`,
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
