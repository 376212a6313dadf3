import type { Backoff, BackoffRun } from '../backoff/backoff.js';
import { describeRow } from '../backoff/describe.js';
import { SEGMENTS } from '../backoff/segment.js';
import { slotted } from '../backoff/slotted.js';
import { seeded } from '../core/random.js';
import { checkKeys, count, nonNegative, optionsObject } from '../core/validate.js';
import { slottedOnly } from './analytic.js';
import { detached } from './detached.js';
import { EventQueue } from './event-queue.js';
import { Histogram } from './histogram.js';
import { slottedSize } from './limits.js';
import { type ProgressCallback, progressOption } from './progress.js';
import { slotsOf } from './slots.js';

/** The 802.3 slot at 10 Mb/s: 512 bit times, 51.2 µs. */
const ETHERNET_SLOT_MS = 0.0512;

/** Options of {@link simulateEthernet}. */
export interface EthernetOptions {
  /** Stations, each always with a frame to send (saturation). Default 32. */
  readonly stations?: number;
  /** The backoff limit: after this many collisions the window stops doubling. Default 10 (802.3). */
  readonly ceiling?: number;
  /** Transmissions of one frame before it is dropped, the first included. Default 16 (802.3's attemptLimit). */
  readonly maxAttempts?: number;
  /**
   * Another slotted policy instead of `ceiling` and `maxAttempts`: row `c` is the wait after the
   * c-th collision of a frame (`presets.ethernet` is the default's equal with ceiling 10).
   */
  readonly backoff?: Backoff;
  /** Slots a successful frame keeps the channel busy. Default 1 (a minimum-size frame is 512 bits, one slot). */
  readonly frameSlots?: number;
  /**
   * Mean idle time, in slots, between a station's delivered frame and its next one (geometric);
   * 0, the default, keeps every station saturated. A think time stops a winner from capturing the
   * channel with back-to-back frames (the finite-population model of CSMA/CD analyses).
   */
  readonly thinkSlots?: number;
  /** Slots to simulate. Default 1,000,000. */
  readonly slots?: number;
  /** Seed of the run's `seeded()` generator. Default 1. */
  readonly seed?: number;
  /** Called as the run progresses (done and total in slots). */
  readonly onProgress?: ProgressCallback;
}

/** The waits drawn after the c-th collision of a frame, against the policy's exact mean. */
export interface BackoffByCollisions {
  /** c: the collisions the frame has had. */
  readonly collisions: number;
  /** Waits drawn after the c-th collision. */
  readonly samples: number;
  /** Their mean, in slots. */
  readonly meanSlots: number;
  /** The policy's exact mean for row c, in slots: E(c) = (2^min(c, ceiling) − 1)/2 for 802.3. */
  readonly expectedSlots: number;
}

/** What {@link simulateEthernet} measured. Latencies are in slots. */
export interface EthernetResult {
  readonly stations: number;
  readonly ceiling: number | null;
  readonly maxAttempts: number | null;
  readonly frameSlots: number;
  readonly thinkSlots: number;
  /** Slots simulated. */
  readonly slots: number;
  /** Slot length in ms (51.2 µs for 802.3 at 10 Mb/s). */
  readonly slotMs: number;
  /** Transmissions in all. */
  readonly transmissions: number;
  /** Frames delivered. */
  readonly successes: number;
  /** Slots in which two or more stations transmitted. */
  readonly collisions: number;
  /** Transmissions that collided ÷ transmissions: the chance that a transmission collides. */
  readonly collisionProbability: number;
  /** Share of slots carrying a delivered frame. */
  readonly throughput: number;
  /** Frames dropped after `maxAttempts` transmissions. */
  readonly framesDropped: number;
  /** Mean slots from a frame reaching the head of its queue to the end of its successful transmission. */
  readonly meanLatencySlots: number;
  /** 99th percentile of that latency (exact below 1024 slots, within 0.3 % above). */
  readonly p99LatencySlots: number;
  /** Its standard deviation: the spread the ceiling trades against collisions. */
  readonly latencyStdDevSlots: number;
  /** The longest latency seen. */
  readonly maxLatencySlots: number;
  /** Per collision count, the waits drawn against E(c). */
  readonly backoffByCollisions: readonly BackoffByCollisions[];
}

/** The 802.3 policy with another ceiling and attempt limit, for {@link simulateEthernet}. */
export function ethernetBackoff(ceiling = 10, maxAttempts = 16): Backoff {
  const where = 'ethernetBackoff()';
  const c = count(where, 'ceiling', ceiling, 10, 1, false, '802.3 uses 10; up to 30.');
  if (c > 30) throw new RangeError(`${where}: expected \`ceiling\` to be at most 30, got ${c}. 802.3 uses 10.`);
  return slotted({ slotMs: ETHERNET_SLOT_MS, cwMin: 0, cwMax: 2 ** c - 1, ceiling: c, maxAttempts });
}

/**
 * Slotted CSMA/CD (IEEE 802.3) in saturation, with ebb's own slotted backoff drawing every wait.
 * Every station always has a frame. A station whose frame is ready transmits in the next slot
 * the channel is free (1-persistent: a station that became ready while the channel was busy
 * waits for it to go idle). One transmission in a slot is a success and keeps the channel for
 * `frameSlots`; the station's next frame is ready when it ends, with no backoff. Two or more
 * collide: each detects it within the slot, and after its c-th collision waits `k` slots, `k`
 * uniform in `0 … 2^min(c, ceiling) − 1` (row c of the policy), then tries again; after
 * `maxAttempts` transmissions the frame is dropped.
 *
 * The winner of a contention sending its next frame at once, against rivals whose windows have
 * grown, is the Ethernet capture effect (Ramakrishnan and Yang, 1994): the latency spread it
 * causes grows with the ceiling, while collisions fall — the trade-off the Wikipedia article
 * describes for choosing the ceiling. {@link ethernetCeilingSweep} draws it.
 *
 * The run jumps from one transmission to the next and touches only the stations that transmit.
 *
 * @example
 * const r = simulateEthernet({ stations: 32, slots: 1e6 });
 * r.backoffByCollisions[2]; // { collisions: 3, meanSlots: ≈3.5, expectedSlots: 3.5, … }
 */
export function simulateEthernet(options?: EthernetOptions): EthernetResult {
  const where = 'simulateEthernet()';
  const o = optionsObject(where, options) as EthernetOptions;
  checkKeys(where, o, [
    'stations',
    'ceiling',
    'maxAttempts',
    'backoff',
    'frameSlots',
    'thinkSlots',
    'slots',
    'seed',
    'onProgress',
  ]);
  const n = count(where, 'stations', o.stations, 32, 1, false, 'Give the number of stations, such as 32.');
  const total = count(where, 'slots', o.slots, 1_000_000, 1, false, 'Simulate, say, 1000000 slots.');
  slottedSize(where, n, total);
  const frameSlots = count(where, 'frameSlots', o.frameSlots, 1, 1, false, 'A minimum-size 802.3 frame is 1 slot.');
  const seed = count(where, 'seed', o.seed, 1, 0, false, 'Any whole number; equal seeds give equal runs.');
  // + 0: a -0 given is reported back as 0.
  const thinkSlots =
    nonNegative(where, 'thinkSlots', o.thinkSlots, 0, false, 'Mean idle slots between frames; 0 saturates.') + 0;
  const onProgress = progressOption(where, o.onProgress);
  let backoff: Backoff;
  let ceiling: number | null;
  if (o.backoff !== undefined) {
    if (o.ceiling !== undefined || o.maxAttempts !== undefined) {
      throw new TypeError(`${where}: \`backoff\` replaces \`ceiling\` and \`maxAttempts\`; give one or the other.`);
    }
    slottedOnly(where, o.backoff);
    backoff = o.backoff;
    const s = backoff[SEGMENTS];
    ceiling =
      s.length === 1 && (s[0] as { ceiling: number }).ceiling !== Infinity
        ? (s[0] as { ceiling: number }).ceiling
        : null;
  } else {
    const c = count(where, 'ceiling', o.ceiling, 10, 1, false, '802.3 uses 10; up to 30.');
    if (c > 30) throw new RangeError(`${where}: expected \`ceiling\` to be at most 30, got ${c}. 802.3 uses 10.`);
    const attempts = count(where, 'maxAttempts', o.maxAttempts, 16, 1, true, "802.3's attemptLimit is 16.");
    backoff = ethernetBackoff(c, attempts);
    ceiling = c;
  }
  const slotMs = slottedOnly(where, backoff);

  const random = seeded(seed);
  const queue = new EventQueue(n);
  const runs: (BackoffRun | undefined)[] = new Array(n).fill(undefined);
  const frameCollisions = new Int32Array(n);
  const frameStart = new Float64Array(n);
  const senders = new Int32Array(n);
  const latency = new Histogram();
  const drawnSum: number[] = [];
  const drawnCount: number[] = [];
  // log(t / (1 + t)) as log1p(−1 / (1 + t)): for t past ~2^52 the quotient rounds to 1 and its log to 0,
  // which would make every idle time log(u) / 0 = −Infinity; log1p stays exact (and negative).
  const thinkLog = Math.log1p(-1 / (1 + thinkSlots));
  for (let i = 0; i < n; i++) queue.push(0, i);

  let free = 0; // the first slot the channel is free
  let transmissions = 0;
  let collided = 0;
  let successes = 0;
  let collisions = 0;
  let dropped = 0;
  const progressEvery = Math.max(1, Math.floor(total / 200));
  let nextProgress = progressEvery;
  for (;;) {
    const ready = queue.peekTime();
    // 1-persistent: whoever became ready while the channel was busy goes as soon as it is free.
    const slot = ready > free ? ready : free;
    if (slot >= total) break;
    let k = 0;
    while (queue.peekTime() <= slot) senders[k++] = queue.pop();
    transmissions += k;
    if (k === 1) {
      const s = senders[0] as number;
      successes++;
      free = slot + frameSlots;
      latency.add(free - (frameStart[s] as number));
      // Geometric think time with mean thinkSlots: whole idle slots, each ending it with chance 1/(1 + thinkSlots).
      const ready = thinkSlots === 0 ? free : free + Math.floor(Math.log(1 - random()) / thinkLog);
      frameStart[s] = ready;
      frameCollisions[s] = 0;
      runs[s] = undefined;
      queue.push(ready, s);
    } else {
      collisions++;
      collided += k;
      free = slot + 1;
      for (let j = 0; j < k; j++) {
        const s = senders[j] as number;
        const c = (frameCollisions[s] as number) + 1;
        frameCollisions[s] = c;
        // A run starts at a frame's first collision: frames that never collide cost nothing.
        let run = runs[s];
        if (run === undefined) {
          run = backoff.start(random);
          runs[s] = run;
        }
        const delay = run.next();
        if (delay < 0) {
          dropped++;
          const ready = thinkSlots === 0 ? free : free + Math.floor(Math.log(1 - random()) / thinkLog);
          frameStart[s] = ready;
          frameCollisions[s] = 0;
          runs[s] = undefined;
          queue.push(ready, s);
          continue;
        }
        const wait = slotsOf(delay, slotMs);
        drawnSum[c] = (drawnSum[c] ?? 0) + wait;
        drawnCount[c] = (drawnCount[c] ?? 0) + 1;
        queue.push(free + wait, s);
      }
    }
    if (onProgress && slot >= nextProgress) {
      onProgress(slot, total);
      nextProgress = slot + progressEvery;
    }
  }
  onProgress?.(total, total);
  const byCollisions: BackoffByCollisions[] = [];
  for (let c = 1; c < drawnCount.length; c++) {
    const samples = drawnCount[c] ?? 0;
    if (samples === 0) continue;
    byCollisions.push({
      collisions: c,
      samples,
      meanSlots: (drawnSum[c] as number) / samples,
      expectedSlots: describeRow(backoff, c).meanDelayMs / slotMs,
    });
  }
  return detached({
    stations: n,
    ceiling,
    maxAttempts: backoff.maxAttempts === Infinity ? null : backoff.maxAttempts,
    frameSlots,
    thinkSlots,
    slots: total,
    slotMs,
    transmissions,
    successes,
    collisions,
    collisionProbability: transmissions === 0 ? 0 : collided / transmissions,
    throughput: Math.min(successes * frameSlots, total) / total,
    framesDropped: dropped,
    meanLatencySlots: latency.mean,
    p99LatencySlots: latency.quantile(0.99),
    latencyStdDevSlots: latency.standardDeviation,
    maxLatencySlots: latency.max,
    backoffByCollisions: byCollisions,
  });
}

/**
 * Runs {@link simulateEthernet} once per ceiling (default 1 … 16), with the same seed and
 * otherwise the same options: collision probability against latency spread, the trade-off the
 * Wikipedia article describes — a higher ceiling makes collisions exponentially less likely but
 * "exponentially increases the range of possible latency times". With a think time (say
 * `thinkSlots: 32` for 32 stations) collisions fall and the latency's standard deviation and
 * maximum grow with every step; in saturation the capture effect muddles the latency side, as
 * the winner of each contention keeps the channel with back-to-back frames.
 */
export function ethernetCeilingSweep(
  options?: Omit<EthernetOptions, 'ceiling' | 'backoff'>,
  ceilings: readonly number[] = Array.from({ length: 16 }, (_, i) => i + 1),
): EthernetResult[] {
  if (!Array.isArray(ceilings) || ceilings.length === 0) {
    throw new TypeError('ethernetCeilingSweep(): expected `ceilings` to be a non-empty array of whole numbers.');
  }
  const base = optionsObject('ethernetCeilingSweep()', options) as EthernetOptions;
  const report = base.onProgress;
  const total = base.slots ?? 1_000_000;
  return ceilings.map((ceiling, i) =>
    simulateEthernet({
      ...base,
      ceiling,
      ...(report ? { onProgress: (done: number) => report(i * total + done, ceilings.length * total) } : {}),
    }),
  );
}
