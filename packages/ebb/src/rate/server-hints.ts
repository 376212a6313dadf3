/**
 * What a server says about its limit in an answer — a pause (`Retry-After`, or an exhausted
 * `RateLimit` policy) and a pace (the IETF `RateLimit` field) — read without running the caller's
 * code or letting its getters throw, and kept for `adaptiveRate`: the pause holds every request,
 * the pace caps the rate while it lasts, and the delivered-rate meter (meter.ts) leaves the paused
 * time out. Neither changes the control law's own rate.
 */
import { parseRateLimit } from '../core/rate-limit-field.js';
import type { Outcome } from '../retry/options.js';
import { SLOT_MS, SLOTS } from './meter.js';

/** What a server said in one answer: a pause (ms), and a pace (r/s) with how long it holds (ms). */
interface ServerHint {
  pauseMs: number;
  paceRate: number;
  paceMs: number;
}

/**
 * The `RateLimit` field of a `Response`-like value, if its `headers` is a real `Headers` (whose
 * `get` runs no code of the caller's); a getter that throws, or anything else, counts as none.
 */
function rateLimitField(response: unknown): string | null {
  if (typeof Headers !== 'function' || typeof response !== 'object' || response === null) return null;
  let headers: unknown;
  try {
    headers = (response as { headers?: unknown }).headers;
  } catch /* Stryker disable next-line BlockStatement: an empty catch returns undefined, which the caller reads as no field too */ {
    return null; // not a response: a value of the caller's, never a reason to fail its operation
  }
  return headers instanceof Headers ? headers.get('ratelimit') : null;
}

/** A property of an error the caller made, read without letting a throwing getter escape. */
function property(value: unknown, key: string): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch /* Stryker disable next-line BlockStatement: an empty catch returns undefined too */ {
    return undefined;
  }
}

/**
 * Reads a server's hint from what an attempt ended with (see `record`). A failure's
 * `retryAfterMs` (set by `ebb/http` from `Retry-After`, RFC 9110 §10.2.3, or an exhausted
 * `RateLimit` policy's `t`) is a pause; NaN, negative, infinite and non-number values are
 * ignored, longer ones cut to `maxMs`. The `RateLimit` field of draft-ietf-httpapi-ratelimit-
 * headers (revisions 08 to 11, §4.1: `r` the quota left, `t` the seconds within which "the client
 * can use no more than" it) of the response — the value on success, `error.response` on failure —
 * gives a pace of `r / t` for `t` seconds (the most restrictive policy; `r = 0` is a pause of `t`
 * unless a `Retry-After` was given, which "MUST take precedence", draft §7). A policy without `t`
 * says nothing about time and is skipped; a malformed field is ignored whole (draft §7).
 */
function serverHint(outcome: Outcome, detail: unknown, maxMs: number): ServerHint | undefined {
  let retryAfter: number | undefined;
  let response: unknown = detail;
  if (outcome !== 'success') {
    const ms = property(detail, 'retryAfterMs');
    if (typeof ms === 'number' && ms >= 0 && ms < Infinity) retryAfter = ms;
    response = property(detail, 'response');
  }
  const items = parseRateLimit(rateLimitField(response));
  if (retryAfter === undefined && items === undefined) return undefined;
  const hint: ServerHint = { pauseMs: Math.min(retryAfter ?? 0, maxMs), paceRate: Infinity, paceMs: 0 };
  // Stryker disable next-line ArrayDeclaration: without a field there is no item with a window; a stray item is skipped like one without t
  for (const item of items ?? []) {
    const t = item.windowSeconds;
    if (t === undefined || t === 0) continue;
    const ms = Math.min(t * 1000, maxMs);
    if (item.remaining === 0) {
      if (retryAfter === undefined) hint.pauseMs = Math.max(hint.pauseMs, ms);
    } else if (item.remaining / t < hint.paceRate) {
      hint.paceRate = item.remaining / t;
      hint.paceMs = ms;
    }
  }
  return hint;
}

/** What servers said lately: the pause that holds, recent pauses, and the pace. */
export class ServerHints {
  readonly #maxMs: number;
  #pausedUntil = -Infinity;
  /** Recent pauses, as [from, until, from, until, …]: the delivered rate leaves them out. */
  // Stryker disable next-line ArrayDeclaration: a stray entry yields NaN bounds, which add no paused time and are dropped at the next pause
  #pauses: number[] = [];
  #paceRate = Infinity;
  // Stryker disable next-line UnaryOperator: with no pace (rate Infinity) a window that never ends paces nothing
  #paceUntil = -Infinity;

  /** `maxMs`: the longest pause or pace an answer holds to (`maxRetryAfterMs`); 0 ignores them all. */
  constructor(maxMs: number) {
    this.#maxMs = maxMs;
  }

  /** No request goes before this: the server said so (`Retry-After`). */
  get pausedUntil(): number {
    return this.#pausedUntil;
  }

  /** The pace a server's `RateLimit` field allows (`r / t`), r/s. */
  get paceRate(): number {
    return this.#paceRate;
  }

  /** Whether any pause was heard in the last 3 s (the meter's span). */
  get paused(): boolean {
    return this.#pauses.length > 0;
  }

  /**
   * Hears an answer (see `serverHint`): a pause moves the earliest next grant (a later pause wins,
   * an earlier one changes nothing); a `RateLimit` pace replaces the last one — the newest answer
   * describes the quota best. True if it said anything.
   */
  hear(now: number, outcome: Outcome, detail: unknown): boolean {
    if (this.#maxMs <= 0) return false;
    const hint = serverHint(outcome, detail, this.#maxMs);
    if (!hint) return false;
    if (hint.pauseMs > 0 && now + hint.pauseMs > this.#pausedUntil) {
      const from = Math.max(now, this.#pausedUntil);
      this.#pausedUntil = now + hint.pauseMs;
      const keepFrom = now - SLOTS * SLOT_MS;
      const kept: number[] = [];
      for (let i = 0; i < this.#pauses.length; i += 2) {
        const until = this.#pauses[i + 1] as number;
        if (until > keepFrom) kept.push(this.#pauses[i] as number, until);
      }
      kept.push(from, this.#pausedUntil);
      this.#pauses = kept;
    }
    if (hint.paceMs > 0) {
      this.#paceRate = hint.paceRate;
      this.#paceUntil = now + hint.paceMs;
    }
    return true;
  }

  /** The milliseconds of server-asked pauses within [from, to]. */
  pausedWithin(from: number, to: number): number {
    let ms = 0;
    for (let i = 0; i < this.#pauses.length; i += 2) {
      const a = Math.max(from, this.#pauses[i] as number);
      const b = Math.min(to, this.#pauses[i + 1] as number);
      if (b > a) ms += b - a;
    }
    return ms;
  }

  /** Whether a server's `RateLimit` pace holds at `now` and is below `rate`. */
  paces(now: number, rate: number): boolean {
    return now < this.#paceUntil && this.#paceRate < rate;
  }

  /** `rate`, or the server's pace while it holds and is lower. */
  paceAt(now: number, rate: number): number {
    return now < this.#paceUntil ? Math.min(rate, this.#paceRate) : rate;
  }
}
