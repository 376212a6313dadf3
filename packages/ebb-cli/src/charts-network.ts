// Charts of the network models: `ebb simulate ethernet` and `ebb simulate wifi`.
import { type ChartSpec, document, HEIGHT, lines, pair, type Row } from './charts-spec.js';

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
