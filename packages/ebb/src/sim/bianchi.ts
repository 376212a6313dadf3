import { checkKeys, count, nonNegative, optionsObject } from '../core/validate.js';

/**
 * Durations of the 802.11 channel in microseconds, as Bianchi's model uses them: an empty
 * backoff slot σ, the time the channel is busy for a successful exchange (T_s) and for a
 * collision (T_c), and the payload carried by a success (E[P]).
 */
export interface DcfTiming {
  /** σ, the empty slot. */
  readonly slotUs: number;
  /** T_s: header, payload, SIFS, ACK and DIFS of a successful exchange. */
  readonly successUs: number;
  /** T_c: how long a collision keeps the channel busy. */
  readonly collisionUs: number;
  /** E[P]: the payload part of T_s, the useful share. */
  readonly payloadUs: number;
}

/**
 * The parameters of Bianchi's paper (Table II: FHSS PHY at 1 Mbit/s, basic access): slot 50 µs,
 * SIFS 28 µs, DIFS 128 µs, propagation delay δ 1 µs, header H = 272 + 128 bits, payload 8184
 * bits, ACK 112 bits plus the PHY header. Hence T_s = H + E[P] + SIFS + δ + ACK + DIFS + δ =
 * 8982 µs and T_c = H + E[P] + DIFS + δ = 8713 µs (§IV-A, eq. 14).
 */
export const bianchiTiming: DcfTiming = Object.freeze({
  slotUs: 50,
  successUs: 8982,
  collisionUs: 8713,
  payloadUs: 8184,
});

/** Options of {@link bianchi}. */
export interface BianchiOptions {
  /** n, the stations contending, each always with a frame to send. At least 1. */
  readonly stations: number;
  /** CWmin: the first window is `W = cwMin + 1` slots. Default 31 (Bianchi's W = 32). */
  readonly cwMin?: number;
  /** m: the window doubles m times, up to `2^m · W`. Default 5 (802.11's CWmax 1023 from CWmin 31). */
  readonly stages?: number;
  /** Channel durations for throughput and delay; default {@link bianchiTiming}. */
  readonly timing?: DcfTiming;
}

/** The fixed point of Bianchi's model and what follows from it. Probabilities in [0, 1]. */
export interface BianchiResult {
  /** τ: the probability that a station transmits in a randomly chosen slot. */
  readonly transmitProbability: number;
  /** p: the probability that a transmission collides (another station transmits in the same slot). */
  readonly collisionProbability: number;
  /** P_tr = 1 − (1 − τ)^n: the probability that a slot carries at least one transmission. */
  readonly busyProbability: number;
  /** P_s: the probability that a busy slot is a success (exactly one transmission). */
  readonly successProbability: number;
  /** S: the share of channel time carrying payload (eq. 13). */
  readonly throughput: number;
  /**
   * The mean time from a frame reaching the head of its station's queue to the end of its
   * successful exchange, in ms: `n · E[slot] / (P_tr · P_s)`, by Little's law, since in
   * saturation every station always has exactly one frame in service.
   */
  readonly meanDelayMs: number;
}

/**
 * Bianchi's analytic model of 802.11 DCF in saturation (G. Bianchi, "Performance Analysis of the
 * IEEE 802.11 Distributed Coordination Function", IEEE JSAC 18(3), 2000): each station transmits
 * in a slot with probability τ and collides with probability p, where
 *
 *     τ = 2(1 − 2p) / ((1 − 2p)(W + 1) + pW(1 − (2p)^m))      (eq. 7)
 *     p = 1 − (1 − τ)^(n − 1)                                   (eq. 9)
 *
 * with `W = cwMin + 1` and `m` doubling stages. ebb solves the pair by bisection on p (the
 * solution is unique), using the equivalent form `τ = 2 / (W + 1 + pW·Σ_{i<m}(2p)^i)`, which has
 * no 0/0 at p = 1/2.
 *
 * The model's slot is a *backoff slot*: an empty slot or one transmission period, during which
 * the counters of the other stations are frozen. `simulateWifi()` counts its slots the same way.
 *
 * @example
 * bianchi({ stations: 10, cwMin: 31, stages: 5 }) // τ ≈ 0.0373, p ≈ 0.290
 */
export function bianchi(options: BianchiOptions): BianchiResult {
  const where = 'bianchi()';
  const o = optionsObject(where, options) as Partial<BianchiOptions>;
  checkKeys(where, o, ['stations', 'cwMin', 'stages', 'timing']);
  const n = count(
    where,
    'stations',
    o.stations,
    Number.NaN,
    1,
    false,
    'Give the number of contending stations, such as 10.',
  );
  const cwMin = count(where, 'cwMin', o.cwMin, 31, 0, false, '802.11 uses 15 (OFDM) or 31 (DSSS, and Bianchi).');
  const m = count(where, 'stages', o.stages, 5, 0, false, 'm = 5 doubles CWmin 31 up to CWmax 1023.');
  const timing = checkTiming(where, o.timing ?? bianchiTiming);
  const w = cwMin + 1;
  const tauOf = (p: number): number => {
    let sum = 0;
    let term = 1;
    for (let i = 0; i < m; i++) {
      sum += term;
      term *= 2 * p;
    }
    return 2 / (w + 1 + p * w * sum);
  };
  let low = 0;
  let high = 1;
  for (let i = 0; i < 100; i++) {
    const p = (low + high) / 2;
    if (p - (1 - (1 - tauOf(p)) ** (n - 1)) > 0) high = p;
    else low = p;
  }
  const p = n === 1 ? 0 : (low + high) / 2;
  const tau = tauOf(p);
  const busy = 1 - (1 - tau) ** n;
  const success = (n * tau * (1 - tau) ** (n - 1)) / busy;
  const slotUs =
    (1 - busy) * timing.slotUs + busy * success * timing.successUs + busy * (1 - success) * timing.collisionUs;
  return {
    transmitProbability: tau,
    collisionProbability: p,
    busyProbability: busy,
    successProbability: success,
    throughput: (busy * success * timing.payloadUs) / slotUs,
    meanDelayMs: (n * slotUs) / (busy * success) / 1000,
  };
}

/** Validates a {@link DcfTiming}. @internal */
export function checkTiming(where: string, timing: unknown): DcfTiming {
  const t = optionsObject(`${where} timing`, timing as object) as Partial<DcfTiming>;
  checkKeys(`${where} timing`, t, ['slotUs', 'successUs', 'collisionUs', 'payloadUs']);
  const fix = 'Durations here are microseconds; see bianchiTiming.';
  const slotUs = nonNegative(where, 'timing.slotUs', t.slotUs, Number.NaN, false, fix);
  const successUs = nonNegative(where, 'timing.successUs', t.successUs, Number.NaN, false, fix);
  const collisionUs = nonNegative(where, 'timing.collisionUs', t.collisionUs, Number.NaN, false, fix);
  const payloadUs = nonNegative(where, 'timing.payloadUs', t.payloadUs, Number.NaN, false, fix);
  if (slotUs === 0) throw new RangeError(`${where}: expected \`timing.slotUs\` to be > 0, got 0. ${fix}`);
  if (payloadUs > successUs) {
    throw new RangeError(
      `${where}: expected \`timing.payloadUs\` (${payloadUs}) to be at most \`timing.successUs\` (${successUs}): the payload is part of a success.`,
    );
  }
  return { slotUs, successUs, collisionUs, payloadUs };
}
