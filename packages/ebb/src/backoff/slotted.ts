import { count, invalid, nonNegative } from '../core/validate.js';
import { type Backoff, curveOptions, fromCurve, type LimitOptions } from './backoff.js';

/** Options of {@link slotted}. */
export interface SlottedOptions extends Omit<LimitOptions, 'jitter'> {
  /** Length of one slot in ms: 0.0512 (51.2 µs) for 10 Mb/s Ethernet, 0.009 for 802.11 OFDM. */
  readonly slotMs: number;
  /** Contention window before the first failure, in slots minus one. Default 0 (802.3); 15 for 802.11 OFDM. */
  readonly cwMin?: number;
  /** Largest contention window, in slots minus one. Default 1023 (both 802.3 and 802.11). */
  readonly cwMax?: number;
}

/**
 * The slotted contention window of shared channels (IEEE 802.3 CSMA/CD, IEEE 802.11 DCF):
 * after `c` failures the sender waits `k` slots, `k` uniform in `0 … W−1`, where
 * `W = min((cwMin+1)·2^c, cwMax+1)` — the window doubles (`CW ← 2(CW+1)−1`) up to `cwMax`.
 *
 * The draw is discrete and built in, so a slotted policy takes no `jitter`. Its mean after `c`
 * failures is `(W−1)/2` slots: with `cwMin` 0, the Wikipedia article's E(c) = (2^c − 1)/2.
 *
 * @example
 * slotted({ slotMs: 0.0512, cwMin: 0, cwMax: 1023, maxAttempts: 16 }) // 802.3, as presets.ethernet
 */
export function slotted(options: SlottedOptions): Backoff {
  const where = 'slotted()';
  const o = curveOptions(where, options);
  const slotMs = nonNegative(where, 'slotMs', o.slotMs, Number.NaN);
  if (slotMs === 0) invalid(where, 'slotMs', 0, 'a finite number > 0', 'The 802.3 slot at 10 Mb/s is 0.0512 ms.');
  const fix = 'Windows are counted in slots minus one, as the standards write CWmin and CWmax.';
  const cwMin = count(where, 'cwMin', o.cwMin, 0, 0, false, fix);
  const cwMax = count(
    where,
    'cwMax',
    o.cwMax,
    Math.max(1023, cwMin),
    cwMin,
    false,
    `${fix} It must be >= cwMin (${cwMin}).`,
  );
  return fromCurve(where, { type: 'slotted', slotMs, cwMin, cwMax }, o, ['slotMs', 'cwMin', 'cwMax']);
}
