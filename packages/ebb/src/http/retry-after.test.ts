import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS } from '../backoff/backoff.js';
import { parseHttpDate, parseRetryAfter } from './retry-after.js';

// RFC 9110 §5.6.7 gives one instant in its three formats: Sun, 06 Nov 1994 08:49:37 GMT.
const RFC_INSTANT = Date.UTC(1994, 10, 6, 8, 49, 37);
const NOW_2026 = Date.UTC(2026, 10, 21, 12, 0, 0);

describe('parseHttpDate: the three formats of RFC 9110 §5.6.7', () => {
  it("reads the RFC's own examples, all three, as the same instant", () => {
    expect(RFC_INSTANT).toBe(784_111_777_000);
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', NOW_2026)).toBe(RFC_INSTANT); // IMF-fixdate
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW_2026)).toBe(RFC_INSTANT); // obsolete RFC 850
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994', NOW_2026)).toBe(RFC_INSTANT); // ANSI C asctime()
  });

  it('asctime takes a two-digit day as well as a space-padded one', () => {
    expect(parseHttpDate('Wed Nov 16 08:49:37 1994')).toBe(Date.UTC(1994, 10, 16, 8, 49, 37));
  });

  it('RFC 850 years: more than 50 years ahead means the previous century', () => {
    // now: November 2026
    expect(parseHttpDate('Thursday, 01-Jan-76 00:00:00 GMT', NOW_2026)).toBe(Date.UTC(2076, 0, 1)); // 50 years ahead
    expect(parseHttpDate('Friday, 01-Jan-77 00:00:00 GMT', NOW_2026)).toBe(Date.UTC(1977, 0, 1)); // 51: the past
    expect(parseHttpDate('Tuesday, 01-Jan-30 00:00:00 GMT', NOW_2026)).toBe(Date.UTC(2030, 0, 1));
    expect(parseHttpDate('Friday, 31-Dec-99 23:59:59 GMT', NOW_2026)).toBe(Date.UTC(1999, 11, 31, 23, 59, 59));
    // In 2099, "05" is 2105 (6 years ahead), not 2005.
    expect(parseHttpDate('Monday, 01-Jan-05 00:00:00 GMT', Date.UTC(2099, 0, 1))).toBe(Date.UTC(2105, 0, 1));
  });

  it('RFC 850 years: the window is (now − 50, now + 50], so exactly 50 years back is read as 50 years ahead', () => {
    // now: June 2080. "30" is 2030 or 2130, both 50 years away; "31" is 2031, 49 years back.
    const NOW_2080 = Date.UTC(2080, 5, 1);
    expect(parseHttpDate('Tuesday, 01-Jan-30 00:00:00 GMT', NOW_2080)).toBe(Date.UTC(2130, 0, 1));
    expect(parseHttpDate('Wednesday, 01-Jan-31 00:00:00 GMT', NOW_2080)).toBe(Date.UTC(2031, 0, 1));
    expect(parseHttpDate('Monday, 01-Jan-29 00:00:00 GMT', NOW_2080)).toBe(Date.UTC(2129, 0, 1));
  });

  it('a four-digit year below 100 is not read as 19xx (Date.UTC maps years 0–99 to 1900–1999): no date', () => {
    expect(Date.UTC(94, 10, 6)).toBe(Date.UTC(1994, 10, 6)); // the trap
    expect(parseHttpDate('Sun, 06 Nov 0094 08:49:37 GMT')).toBeUndefined();
    expect(parseHttpDate('Sun Nov  6 08:49:37 0094')).toBeUndefined();
    expect(parseHttpDate('Sun, 06 Nov 0100 08:49:37 GMT')).toBe(Date.UTC(100, 10, 6, 8, 49, 37));
  });

  it('takes strings only: a String object or an object whose toString() gives a date is no header value', () => {
    const date = 'Sun, 06 Nov 1994 08:49:37 GMT';
    for (const value of [new String(date), { toString: () => date }, 784111777000, null, undefined]) {
      expect(parseHttpDate(value as never), String(value)).toBeUndefined();
      expect(parseRetryAfter(value as never), String(value)).toBeUndefined();
    }
  });

  it('a leap second (23:59:60, allowed by the grammar) is the first second of the next day', () => {
    expect(parseHttpDate('Thu, 31 Dec 1998 23:59:60 GMT')).toBe(Date.UTC(1999, 0, 1));
  });

  it('rejects what is not an HTTP-date: wrong case, zone, padding, calendar or clock', () => {
    for (const bad of [
      'sun, 06 Nov 1994 08:49:37 GMT', // case-sensitive
      'Sun, 06 nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 08:49:37 gmt',
      'Sun, 06 Nov 1994 08:49:37 UTC',
      'Sun, 06 Nov 1994 08:49:37 +0000',
      'Sun, 6 Nov 1994 08:49:37 GMT', // IMF-fixdate days have two digits
      'Sun,  06 Nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 94 08:49:37 GMT',
      'Sun, 31 Feb 1994 08:49:37 GMT', // no such day
      'Sun, 00 Nov 1994 08:49:37 GMT',
      'Sun, 06 Nov 1994 24:00:00 GMT',
      'Sun, 06 Nov 1994 08:60:00 GMT',
      'Sun, 06 Nov 1994 08:49:61 GMT',
      'Sun, 06 Nov 1994 8:49:37 GMT',
      'Sonntag, 06 Nov 1994 08:49:37 GMT',
      'Sun, 06-Nov-94 08:49:37 GMT', // short day name in RFC 850
      'Sunday, 06 Nov 1994 08:49:37 GMT',
      'Sun Nov 6 08:49:37 1994', // asctime pads a one-digit day with a space
      'Sun Nov  6 08:49:37 1994 GMT',
      '1994-11-06T08:49:37Z', // ISO 8601 is not an HTTP-date
      '784111777',
      '',
    ]) {
      expect(parseHttpDate(bad), bad).toBeUndefined();
    }
  });

  it('round-trips every IMF-fixdate toUTCString() writes, years 1000 to 9999 (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1000, 0, 1) / 1000, max: Date.UTC(9999, 11, 31, 23, 59, 59) / 1000 }),
        (s) => {
          const ms = s * 1000;
          expect(parseHttpDate(new Date(ms).toUTCString())).toBe(ms);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('parseRetryAfter (RFC 9110 §10.2.3)', () => {
  it("reads the RFC's examples: 120 is two minutes; a date is the time until then", () => {
    expect(parseRetryAfter('120')).toBe(120_000);
    const now = Date.UTC(1999, 11, 31, 23, 58, 59);
    expect(parseRetryAfter('Fri, 31 Dec 1999 23:59:59 GMT', now)).toBe(60_000);
  });

  it('reads delay-seconds exactly, 0 and leading zeros included', () => {
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter('1')).toBe(1000);
    expect(parseRetryAfter('007')).toBe(7000);
    expect(parseRetryAfter('86400')).toBe(86_400_000);
    expect(parseRetryAfter(' 5 ')).toBe(5000); // a field value carries no surrounding whitespace
  });

  it('a date in the past means "now": 0', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', NOW_2026)).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', RFC_INSTANT)).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:38 GMT', RFC_INSTANT)).toBe(1000);
  });

  it('the HTTP-date forms all give the same wait', () => {
    const now = RFC_INSTANT - 2500;
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now)).toBe(2500);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now)).toBe(2500);
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', now)).toBe(2500);
  });

  it('ignores garbage, negatives, fractions, exponents and signs: no hint, not a zero wait', () => {
    for (const bad of [
      '1e3',
      '-1',
      '-0',
      '+5',
      '1.5',
      '.5',
      '5.',
      '0x10',
      '1_000',
      '5s',
      '5 s',
      'soon',
      '',
      ' ',
      'NaN',
    ]) {
      expect(parseRetryAfter(bad), JSON.stringify(bad)).toBeUndefined();
    }
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter(120 as unknown as string)).toBeUndefined();
  });

  it('reads delay-seconds too long for a double as the longest wait, never Infinity', () => {
    const huge = '9'.repeat(400);
    expect(Number(huge)).toBe(Infinity);
    expect(parseRetryAfter(huge)).toBe(MAX_DELAY_MS);
    expect(parseRetryAfter(`1${'0'.repeat(308)}`)).toBe(MAX_DELAY_MS);
    // The saturation point: the last value below it is exact, anything above saturates.
    expect(parseRetryAfter('9007199254740')).toBe(9_007_199_254_740_000);
    expect(parseRetryAfter('9007199254741')).toBe(MAX_DELAY_MS);
  });

  it('never throws and never returns a negative or non-finite wait, whatever the input (property)', () => {
    // Digit strings of any length (up to 600, past Number's 309-digit overflow) beside any string.
    // (fast-check's default size keeps strings short, so the length is drawn first.)
    const digits = fc
      .integer({ min: 1, max: 600 })
      .chain((n) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: n, maxLength: n }));
    const padded = fc.tuple(fc.constantFrom('', ' ', '\t'), digits, fc.constantFrom('', ' ')).map((p) => p.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string(), digits, padded), fc.integer({ min: 0, max: 4_000_000_000_000 }), (s, now) => {
        const ms = parseRetryAfter(s, now);
        if (ms !== undefined) {
          expect(ms).toBeGreaterThanOrEqual(0);
          expect(ms).toBeLessThanOrEqual(MAX_DELAY_MS);
        }
        // Every string of digits is a hint: none is dropped, however long.
        if (/^\d+$/.test(s.trim())) expect(ms).toBeDefined();
      }),
      { numRuns: 5000 },
    );
  });

  it('every string of digits n is n seconds (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), (n) => {
        expect(parseRetryAfter(String(n))).toBe(n * 1000);
      }),
    );
  });
});

describe('parseRetryAfter: a repeated field, combined with ", " (RFC 9110 §5.2)', () => {
  // 23:58:59 on 31 Dec 1999: the RFC's example date is 60 s later.
  const NOW = Date.UTC(1999, 11, 31, 23, 58, 59);
  const IMF = 'Fri, 31 Dec 1999 23:59:59 GMT'; // 60 s after NOW
  const RFC850 = 'Friday, 31-Dec-99 23:59:29 GMT'; // 30 s after NOW
  const ASCTIME = 'Fri Dec 31 23:59:49 1999'; // 50 s after NOW

  it('waits for the longest value, whichever comes first', () => {
    // What fetch hands over for two Retry-After fields.
    const headers = new Headers();
    headers.append('retry-after', '0');
    headers.append('retry-after', '120');
    expect(headers.get('retry-after')).toBe('0, 120');
    expect(parseRetryAfter(headers.get('retry-after'))).toBe(120_000);
    expect(parseRetryAfter('0, 120')).toBe(120_000);
    expect(parseRetryAfter('120, 0')).toBe(120_000);
    expect(parseRetryAfter('1, 2, 3')).toBe(3000);
    expect(parseRetryAfter('3, 3')).toBe(3000);
    expect(parseRetryAfter('0, 0')).toBe(0); // a hint of "now", not no hint
  });

  it('keeps a date whole across its own comma, beside a number', () => {
    expect(parseRetryAfter(`${IMF}, 30`, NOW)).toBe(60_000);
    expect(parseRetryAfter(`30, ${IMF}`, NOW)).toBe(60_000);
    expect(parseRetryAfter(`${IMF}, 90`, NOW)).toBe(90_000);
    expect(parseRetryAfter(`90, ${RFC850}`, NOW)).toBe(90_000);
    expect(parseRetryAfter(`${ASCTIME}, 10`, NOW)).toBe(50_000);
    // A date in the past is 0, a hint like any other: the number beside it wins.
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT, 7', NOW)).toBe(7000);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT, 0', NOW)).toBe(0);
  });

  it('reads two dates, in any of the three formats', () => {
    expect(parseRetryAfter(`${IMF}, ${RFC850}`, NOW)).toBe(60_000);
    expect(parseRetryAfter(`${RFC850}, ${IMF}`, NOW)).toBe(60_000);
    expect(parseRetryAfter(`${RFC850}, ${ASCTIME}`, NOW)).toBe(50_000);
    expect(parseRetryAfter(`${IMF}, ${IMF}`, NOW)).toBe(60_000);
  });

  it('skips a part that is not a Retry-After and reads the others', () => {
    expect(parseRetryAfter('soon, 5')).toBe(5000);
    expect(parseRetryAfter('5, soon')).toBe(5000);
    expect(parseRetryAfter('1e3, 7')).toBe(7000); // not 1000 s: "1e3" is no hint
    expect(parseRetryAfter('-1, 2')).toBe(2000);
    expect(parseRetryAfter('1.5, 0')).toBe(0);
    expect(parseRetryAfter('5,')).toBe(5000); // empty list elements (RFC 9110 §5.6.1.2)
    expect(parseRetryAfter(', , 5')).toBe(5000);
    // A bare day name is no date, and does not swallow the number after it.
    expect(parseRetryAfter('Sun, 120')).toBe(120_000);
    expect(parseRetryAfter(`Sun, ${IMF}`, NOW)).toBe(60_000);
    expect(parseRetryAfter(`soon, ${IMF}`, NOW)).toBe(60_000);
  });

  it('a part too long for a double is still "longer than anything"', () => {
    expect(parseRetryAfter(`1, ${'9'.repeat(400)}`)).toBe(MAX_DELAY_MS);
    expect(parseRetryAfter(`${'9'.repeat(400)}, 0`)).toBe(MAX_DELAY_MS);
  });

  it('is no hint when no part reads', () => {
    for (const bad of [
      'soon, later',
      '1e3, -1',
      '1.5, +5',
      ',',
      ', ',
      ' , , ',
      'Sun, 6 Nov 1994',
      'Sun , 06 Nov 1994 08:49:37 GMT',
    ]) {
      expect(parseRetryAfter(bad, NOW), JSON.stringify(bad)).toBeUndefined();
    }
  });

  it('ignores whitespace around each part, as around a single value', () => {
    for (const v of ['0,120', '0 ,120', ' 0 , 120 ', '\t0,\t120\t', '0,  120', '0 ,\t 120']) {
      expect(parseRetryAfter(v), JSON.stringify(v)).toBe(120_000);
    }
    expect(parseRetryAfter(` ${IMF} ,  30 `, NOW)).toBe(60_000);
  });

  it('the combined value is the longest of its parts, or no hint when none reads (property)', () => {
    // Instants within 40 years of now, so that an RFC 850 two-digit year reads back unambiguously.
    const now = Date.UTC(2026, 10, 21, 12, 0, 0);
    const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    const rfc850 = (d: Date) => {
      const [, day, month, year, time] = d.toUTCString().split(' ') as string[];
      return `${DAYS[d.getUTCDay()]}, ${day}-${month}-${(year as string).slice(2)} ${time} GMT`;
    };
    const asctime = (d: Date) => {
      const [wd, day, month, year, time] = d.toUTCString().replace(',', '').split(' ') as string[];
      return `${wd} ${month} ${String(Number(day)).padStart(2, ' ')} ${time} ${year}`;
    };
    const instant = fc
      .integer({ min: -40 * 365 * 86_400, max: 40 * 365 * 86_400 })
      .map((s) => new Date(Math.floor(now / 1000) * 1000 + s * 1000));
    const valid = fc.oneof(
      fc.integer({ min: 0, max: 1e9 }).map(String),
      fc.constantFrom('0', '007', '9'.repeat(400)),
      instant.map((d) => d.toUTCString()),
      instant.map(rfc850),
      instant.map(asctime),
    );
    const invalid = fc.oneof(
      fc.constantFrom('', ' ', '1e3', '-1', '+5', '1.5', '0x10', 'NaN', 'soon', 'Sun', 'Sunday', '5s'),
      fc.constantFrom('Sun 06 Nov 1994 08:49:37 GMT', '1994-11-06T08:49:37Z'),
      fc.string().filter((s) => !s.includes(',') && parseRetryAfter(s, now) === undefined),
    );
    const space = fc.constantFrom('', ' ', '  ', '\t');
    const part = fc
      .tuple(
        space,
        fc.oneof(
          valid.map((p) => ({ p, ok: true })),
          invalid.map((p) => ({ p, ok: false })),
        ),
        space,
      )
      .map(([a, { p, ok }, b]) => ({ text: `${a}${p}${b}`, p, ok }));
    fc.assert(
      fc.property(fc.array(part, { minLength: 2, maxLength: 6 }), (parts) => {
        const hints = parts.map(({ p }) => parseRetryAfter(p, now));
        // The generators are what they claim: every valid form reads alone, no invalid one does.
        for (const [i, { p, ok }] of parts.entries()) expect(hints[i] !== undefined, p).toBe(ok);
        const combined = parseRetryAfter(parts.map(({ text }) => text).join(','), now);
        const read = hints.filter((ms) => ms !== undefined);
        expect(combined).toBe(read.length === 0 ? undefined : Math.max(...read));
      }),
      { numRuns: 3000 },
    );
  });
});
