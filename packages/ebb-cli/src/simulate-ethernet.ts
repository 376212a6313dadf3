// `ebb simulate ethernet`: slotted CSMA/CD with truncated binary exponential backoff.
import { ethernetCeilingSweep, simulateEthernet } from 'ebb/sim';
import { backoffChart, ceilingChart, stationsChart } from './charts.js';
import { parseNumber } from './duration.js';
import {
  fixed,
  type OutputFlags,
  parseCount,
  parseRange,
  pct,
  planned,
  type SimulateIO,
  type Simulation,
  seedOf,
} from './simulate-common.js';
import { type RunPlan, stationSlots } from './simulate-cost.js';
import { table } from './table.js';
import { UsageError } from './usage-error.js';

/** Flags of `ebb simulate ethernet`. */
export interface EthernetFlags extends OutputFlags {
  readonly stations?: string;
  readonly ceiling?: string;
  readonly attemptLimit?: string;
  readonly frameSlots?: string;
  readonly think?: string;
  readonly slots?: string;
  readonly sweepCeiling?: string;
  readonly sweepStations?: string;
}

const load = (thinkSlots: number): string =>
  thinkSlots === 0 ? 'saturated' : `${thinkSlots} idle slots between frames on average`;

/** `ebb simulate ethernet`: one run, a ceiling sweep or a stations sweep. */
export function ethernetModel(flags: EthernetFlags, io: SimulateIO): Simulation {
  const seed = seedOf(flags);
  // The ceiling sweep idles each station between frames by default: in saturation the capture
  // effect (the winner keeps the channel) hides the latency side of the trade-off.
  const thinkSlots =
    flags.think === undefined ? (flags.sweepCeiling === undefined ? 0 : 32) : parseNumber('--think', flags.think);
  const base = {
    stations: flags.stations === undefined ? 32 : parseCount('--stations', flags.stations),
    frameSlots: flags.frameSlots === undefined ? 1 : parseCount('--frame-slots', flags.frameSlots),
    thinkSlots,
    slots: flags.slots === undefined ? 1_000_000 : parseCount('--slots', flags.slots),
    seed,
  };
  const ceiling = flags.ceiling === undefined ? 10 : parseCount('--ceiling', flags.ceiling);
  const maxAttempts = flags.attemptLimit === undefined ? 16 : parseCount('--attempt-limit', flags.attemptLimit);
  if (flags.sweepCeiling !== undefined && flags.sweepStations !== undefined) {
    throw new UsageError('--sweep-ceiling and --sweep-stations cannot be combined');
  }
  if (flags.sweepCeiling !== undefined) {
    if (flags.ceiling !== undefined) throw new UsageError('--ceiling and --sweep-ceiling cannot be combined');
    const ceilings = parseRange('--sweep-ceiling', flags.sweepCeiling);
    const plan: RunPlan = {
      model: 'ethernet',
      parts: [ceilings.length * stationSlots(base.stations, base.slots)],
      smaller: 'fewer --slots or --stations',
    };
    const points = planned(io, plan, (part) =>
      ethernetCeilingSweep({ ...base, maxAttempts, onProgress: part(0) }, ceilings),
    );
    const doc = {
      model: 'ethernet',
      sweep: 'ceiling',
      seed,
      stations: base.stations,
      thinkSlots,
      slots: base.slots,
      points,
    };
    const text = [
      `ethernet — ${base.stations} stations, ${load(thinkSlots)}, ${base.slots} slots, attempt limit ${maxAttempts}, seed ${seed}: the ceiling sweep`,
      '',
      table(
        ['ceiling', 'collisions', 'throughput', 'mean latency', 'std dev', 'p99', 'max', 'dropped'],
        points.map((p) => [
          String(p.ceiling),
          pct(p.collisionProbability),
          pct(p.throughput),
          fixed(p.meanLatencySlots),
          fixed(p.latencyStdDevSlots),
          fixed(p.p99LatencySlots, 0),
          String(p.maxLatencySlots),
          String(p.framesDropped),
        ]),
      ),
      '',
      'latency in slots (51.2 µs at 10 Mb/s); collisions: share of transmissions that collided',
    ].join('\n');
    return { doc, text: `${text}\n`, chart: ceilingChart({ stations: base.stations, thinkSlots, points }) };
  }
  if (flags.sweepStations !== undefined) {
    const list = parseRange('--sweep-stations', flags.sweepStations);
    const plan: RunPlan = {
      model: 'ethernet',
      parts: list.map((stations) => stationSlots(stations, base.slots)),
      smaller: 'fewer --slots or stations',
    };
    const points = planned(io, plan, (part) =>
      list.map((stations, i) => simulateEthernet({ ...base, stations, ceiling, maxAttempts, onProgress: part(i) })),
    );
    const doc = { model: 'ethernet', sweep: 'stations', seed, ceiling, maxAttempts, slots: base.slots, points };
    const text = [
      `ethernet — ${load(thinkSlots)}, ${base.slots} slots, ceiling ${ceiling}, attempt limit ${maxAttempts}, seed ${seed}: stations sweep`,
      '',
      table(
        ['stations', 'collisions', 'throughput', 'mean latency', 'p99', 'dropped'],
        points.map((p) => [
          String(p.stations),
          pct(p.collisionProbability),
          pct(p.throughput),
          fixed(p.meanLatencySlots),
          fixed(p.p99LatencySlots, 0),
          String(p.framesDropped),
        ]),
      ),
    ].join('\n');
    return { doc, text: `${text}\n`, chart: stationsChart({ model: 'ethernet', points }) };
  }
  const plan: RunPlan = {
    model: 'ethernet',
    parts: [stationSlots(base.stations, base.slots)],
    smaller: 'fewer --slots or --stations',
  };
  const r = planned(io, plan, (part) => simulateEthernet({ ...base, ceiling, maxAttempts, onProgress: part(0) }));
  const doc = { model: 'ethernet', seed, ...r };
  const text = [
    `ethernet — ${r.stations} stations, ${load(thinkSlots)}, ${r.slots} slots, ceiling ${ceiling}, attempt limit ${maxAttempts}, seed ${seed}`,
    '',
    `throughput             ${pct(r.throughput)} of slots carry a delivered frame`,
    `collision probability  ${pct(r.collisionProbability)} of transmissions collide`,
    `latency (slots)        mean ${fixed(r.meanLatencySlots)}, p99 ${fixed(r.p99LatencySlots, 0)}, max ${r.maxLatencySlots}`,
    `frames                 ${r.successes} delivered, ${r.framesDropped} dropped after ${maxAttempts} attempts`,
    '',
    'mean backoff after c collisions (slots), against E(c) = (2^min(c, ceiling) − 1)/2:',
    '',
    table(
      ['c', 'draws', 'measured', 'E(c)', 'error'],
      r.backoffByCollisions.map((b) => [
        String(b.collisions),
        String(b.samples),
        fixed(b.meanSlots, 2),
        fixed(b.expectedSlots, 2),
        b.expectedSlots === 0 ? '—' : pct(b.meanSlots / b.expectedSlots - 1, 1),
      ]),
    ),
  ].join('\n');
  return { doc, text: `${text}\n`, chart: backoffChart(r) };
}
