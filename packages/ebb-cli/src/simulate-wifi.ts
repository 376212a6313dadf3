// `ebb simulate wifi`: 802.11 DCF in saturation beside Bianchi's analytic model.
import { bianchi, simulateWifi } from 'ebb/sim';
import { stationsChart, wifiChart } from './charts.js';
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

/** Flags of `ebb simulate wifi`. */
export interface WifiFlags extends OutputFlags {
  readonly stations?: string;
  readonly cwMin?: string;
  readonly stages?: string;
  readonly retryLimit?: string;
  readonly slots?: string;
  readonly sweepStations?: string;
}

/** `ebb simulate wifi`: the simulation beside Bianchi's model, for one n or a sweep. */
export function wifiModel(flags: WifiFlags, io: SimulateIO): Simulation {
  const seed = seedOf(flags);
  const cwMin = flags.cwMin === undefined ? 31 : parseCount('--cw-min', flags.cwMin, 0);
  const stages = flags.stages === undefined ? 5 : parseCount('--stages', flags.stages, 0);
  const slots = flags.slots === undefined ? 1_000_000 : parseCount('--slots', flags.slots);
  const retryLimit = flags.retryLimit === undefined ? undefined : parseCount('--retry-limit', flags.retryLimit);
  const list =
    flags.sweepStations !== undefined
      ? parseRange('--sweep-stations', flags.sweepStations)
      : [flags.stations === undefined ? 10 : parseCount('--stations', flags.stations)];
  if (flags.sweepStations !== undefined && flags.stations !== undefined) {
    throw new UsageError('--stations and --sweep-stations cannot be combined');
  }
  const plan: RunPlan = {
    model: 'wifi',
    parts: list.map((stations) => stationSlots(stations, slots)),
    smaller: 'fewer --slots or stations',
  };
  const points = planned(io, plan, (part) =>
    list.map((stations, i) => ({
      ...simulateWifi({
        stations,
        cwMin,
        stages,
        slots,
        seed,
        ...(retryLimit === undefined ? {} : { retryLimit }),
        onProgress: part(i),
      }),
      bianchi: bianchi({ stations, cwMin, stages }),
    })),
  );
  const head = `wifi — 802.11 DCF in saturation, CWmin ${cwMin}, m = ${stages}, ${slots} backoff slots, seed ${seed}; Bianchi's timing (FHSS, basic access)`;
  const rows = points.map((p) => [
    String(p.stations),
    p.transmitProbability.toFixed(5),
    p.bianchi.transmitProbability.toFixed(5),
    p.collisionProbability.toFixed(4),
    p.bianchi.collisionProbability.toFixed(4),
    pct(p.throughput, 1),
    pct(p.bianchi.throughput, 1),
    fixed(p.meanDelayMs),
    fixed(p.bianchi.meanDelayMs),
  ]);
  const text = [
    head,
    '',
    table(['stations', 'τ sim', 'τ Bianchi', 'p sim', 'p Bianchi', 'S sim', 'S Bianchi', 'delay ms', 'Bianchi'], rows),
    '',
    'τ: transmit probability per station per backoff slot; p: collision probability per transmission;',
    'S: share of channel time carrying payload; delay: head of queue to acknowledged, mean',
  ].join('\n');
  if (flags.sweepStations !== undefined) {
    const doc = { model: 'wifi', sweep: 'stations', seed, cwMin, stages, slots, points };
    return { doc, text: `${text}\n`, chart: stationsChart({ model: 'wifi', points }) };
  }
  const p = points[0] as (typeof points)[number];
  const doc = { model: 'wifi', seed, cwMin, stages, ...p };
  return { doc, text: `${text}\n`, chart: wifiChart({ ...p, cwMin, stages }) };
}
