/**
 * `Retry-After` (RFC 9110 §10.2.3) and HTTP-date (RFC 9110 §5.6.7), parsed strictly.
 *
 *     Retry-After   = HTTP-date / delay-seconds
 *     delay-seconds = 1*DIGIT
 *     HTTP-date     = IMF-fixdate / obs-date            ; obs-date = rfc850-date / asctime-date
 *     IMF-fixdate   = day-name "," SP day SP month SP year SP time-of-day SP "GMT"
 *     rfc850-date   = day-name-l "," SP day "-" month "-" 2DIGIT SP time-of-day SP "GMT"
 *     asctime-date  = day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP year
 *
 * Strict, because a lenient reading of a hint turns garbage into a wait: `Date.parse('1e3')`
 * is a date in the year 1000 in some engines, `Number('1e3')` is 1000, `Number(' ')` is 0 and
 * `parseInt('5s')` is 5. None of those is a `Retry-After`, so all of them are ignored here.
 */

import { MAX_DELAY_MS } from '../backoff/backoff.js';

// The three grammars as literals (no module-level work: a bundle that reaches this module and
// uses none of it drops them). day-name, day-name-l and month are RFC 9110 §5.6.7's, case-sensitive.
const IMF_FIXDATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const RFC850_DATE =
  /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d{2})-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
const ASCTIME_DATE =
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{2}| \d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;
/** A month's number (0–11) from its name as the grammars matched it. */
const monthOf = (name: string): number => 'JanFebMarAprMayJunJulAugSepOctNovDec'.indexOf(name) / 3;
const DELAY_SECONDS = /^\d+$/;

/** Milliseconds since the epoch for a valid calendar date and time, or undefined. */
function utc(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  // time-of-day is 00:00:00 – 23:59:60, 60 being a leap second (RFC 9110 §5.6.7); POSIX time,
  // which has no leap seconds, counts it as the first second of the next minute.
  if (hour > 23 || minute > 59 || second > 60 || day < 1) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  // Date.UTC rolls 31 Feb over into March; such a date is not a date.
  const check = new Date(ms);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month || check.getUTCDate() !== day) return undefined;
  return second === 60 ? ms + 1000 : ms;
}

/**
 * Parses an HTTP-date in any of its three formats (RFC 9110 §5.6.7: a recipient "MUST accept
 * all three") into milliseconds since the epoch; undefined if `value` is not one. The weekday
 * must be a valid name but is not checked against the date, as browsers do not check it either.
 * Anything but a string (a missing field's null) gives undefined.
 *
 * RFC 850's two-digit year is read as the RFC says: a year that "appears to be more than 50
 * years in the future" is the most recent past year with the same last two digits; `nowMs`
 * (default `Date.now()`) is "now" for that rule.
 *
 * @example
 * parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT');   // 784111777000
 * parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT');  // 784111777000
 * parseHttpDate('Sun Nov  6 08:49:37 1994');        // 784111777000
 */
export function parseHttpDate(value: string | null | undefined, nowMs: number = Date.now()): number | undefined {
  if (typeof value !== 'string') return undefined;
  let m = IMF_FIXDATE.exec(value);
  if (m) {
    const [, day, month, year, h, min, s] = m as unknown as string[];
    return utc(Number(year), monthOf(month as string), Number(day), Number(h), Number(min), Number(s));
  }
  m = RFC850_DATE.exec(value);
  if (m) {
    const [, day, month, yy, h, min, s] = m as unknown as string[];
    const nowYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(nowYear / 100) * 100 + Number(yy);
    if (year > nowYear + 50) year -= 100;
    else if (year <= nowYear - 50) year += 100;
    return utc(year, monthOf(month as string), Number(day), Number(h), Number(min), Number(s));
  }
  m = ASCTIME_DATE.exec(value);
  if (m) {
    const [, month, day, h, min, s, year] = m as unknown as string[];
    return utc(Number(year), monthOf(month as string), Number(day), Number(h), Number(min), Number(s));
  }
  return undefined;
}

/**
 * Reads a `Retry-After` field value as a wait in milliseconds from `nowMs`.
 *
 * - delay-seconds (`"120"`) → 120 000. Only digits: `"1e3"`, `"1.5"`, `"-1"`, `"+5"`, `"0x10"`
 *   and `""` are not delay-seconds, and give undefined. The grammar sets no upper bound, so a
 *   value too long for a double (400 digits is `Infinity` to `Number`) or above `MAX_DELAY_MS`
 *   (2^53 − 1 ms, about 285,000 years) reads as `MAX_DELAY_MS`: "longer than anything", so the
 *   executor gives up at once (it exceeds any finite `maxRetryAfterMs`), exactly as it does for
 *   `"10000000"`. Reading it as `Infinity` would get it dropped as no hint at all, and the
 *   client would retry sooner than the server asked.
 * - an HTTP-date → the time from `nowMs` (milliseconds since the epoch, a wall-clock time) to
 *   that date; a date in the past gives 0 (retry now).
 * - a repeated field → the **longest** wait any of its values asks for. `Retry-After` is one
 *   value, but a server that sends the field twice reaches `fetch` as one value joined with
 *   ", " (RFC 9110 §5.2; `"0, 120"`). Each comma-separated part is read as above (an
 *   IMF-fixdate's or RFC 850 date's own comma stays inside its date), parts that are not a
 *   `Retry-After` are skipped, and the longest of the rest wins: the server asked for 120 s
 *   somewhere, so retrying after 0 — or on the normal backoff — would be sooner than it asked.
 *   A value none of whose parts reads is no hint.
 * - anything else → undefined: a hint the server did not give is no reason to wait.
 *
 * Surrounding whitespace is ignored (a field value has none, RFC 9110 §5.5). `withRetry` passes
 * the response's own `Date` as `nowMs` when it has one, so that a skewed client clock does not
 * shift the wait.
 *
 * @param value the field value, as `response.headers.get('retry-after')` returns it (null allowed).
 * @param nowMs wall-clock "now" in ms since the epoch; default `Date.now()`.
 * @example
 * parseRetryAfter('120');                                                    // 120000
 * parseRetryAfter('Fri, 31 Dec 1999 23:59:59 GMT', Date.UTC(1999, 11, 31, 23, 59, 0)); // 59000
 * parseRetryAfter('0, 120');                                                 // 120000
 * parseRetryAfter('soon');                                                   // undefined
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number = Date.now()): number | undefined {
  if (typeof value !== 'string') return undefined;
  const parts = value.split(',');
  let longest: number | undefined;
  for (let i = 0; i < parts.length; i++) {
    // A part that reads as a date only together with the next one ("Sun" + " 06 Nov 1994 …")
    // is one date, split at its own comma; neither half alone is a Retry-After.
    let ms = i + 1 < parts.length ? parseOne(`${parts[i]},${parts[i + 1]}`, nowMs) : undefined;
    if (ms === undefined) ms = parseOne(parts[i] as string, nowMs);
    else i++;
    if (ms !== undefined && (longest === undefined || ms > longest)) longest = ms;
  }
  return longest;
}

/** One `Retry-After` value (delay-seconds or an HTTP-date) as a wait in ms, or undefined. */
function parseOne(value: string, nowMs: number): number | undefined {
  const v = value.trim();
  if (DELAY_SECONDS.test(v)) {
    const ms = Number(v) * 1000;
    return ms < MAX_DELAY_MS ? ms : MAX_DELAY_MS;
  }
  const at = parseHttpDate(v, nowMs);
  if (at === undefined) return undefined;
  return at > nowMs ? at - nowMs : 0;
}

/**
 * The wait a response's `Retry-After` asks for, in ms, or undefined — `withRetry()`'s default
 * reading of a failed response's hint. An HTTP-date is measured from the response's own `Date`
 * field when it has a valid one, so that the wait is what the server meant whatever the skew
 * between the two clocks; otherwise from `nowMs` (default `Date.now()`). A date in the past
 * gives 0. `serverHintMs` also reads the IETF `RateLimit` field.
 *
 * @example
 * retryAfterMs(new Response(null, { status: 503, headers: { 'retry-after': '2' } }));  // 2000
 */
export function retryAfterMs(
  response: { readonly headers: { get(name: string): string | null } },
  nowMs: number = Date.now(),
): number | undefined {
  // Both parsers read a missing field (null) as no value.
  const serverNow = parseHttpDate(response.headers.get('date'), nowMs);
  return parseRetryAfter(response.headers.get('retry-after'), serverNow ?? nowMs);
}
