import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRateLimit, rateLimitWaitMs } from './rate-limit.js';

describe('parseRateLimit: the examples of draft-ietf-httpapi-ratelimit-headers', () => {
  it('reads §4.2: an available quota of 50 and an effective window of 30 s', () => {
    expect(parseRateLimit('"default";r=50;t=30')).toEqual([{ policy: 'default', remaining: 50, windowSeconds: 30 }]);
  });

  it('reads §4.2: a partition key, with and without a window', () => {
    expect(parseRateLimit('"default";r=999;pk=:dHJpYWwxMjEzMjM=:')).toEqual([
      { policy: 'default', remaining: 999, windowSeconds: undefined },
    ]);
    expect(parseRateLimit('"default";r=300000000;t=60;pk=:QXBwLTk5OQ==:')).toEqual([
      { policy: 'default', remaining: 300_000_000, windowSeconds: 60 },
    ]);
  });

  it('reads a List of several policies, and several fields joined by ", " (one List)', () => {
    expect(parseRateLimit('"burst";r=0;t=2, "daily";r=900;t=3600')).toEqual([
      { policy: 'burst', remaining: 0, windowSeconds: 2 },
      { policy: 'daily', remaining: 900, windowSeconds: 3600 },
    ]);
  });

  it('takes a Token as the policy too (drafts before 11), other parameters as comments, and escapes', () => {
    expect(parseRateLimit('default;r=0;t=5')).toEqual([{ policy: 'default', remaining: 0, windowSeconds: 5 }]);
    expect(parseRateLimit('"p";r=1;t=2;acme-burst=?1;note="x, y";w=1.5;x=@1700000000;d=%"z";f')).toEqual([
      { policy: 'p', remaining: 1, windowSeconds: 2 },
    ]);
    expect(parseRateLimit('"a\\"b\\\\c";r=1')).toEqual([{ policy: 'a"b\\c', remaining: 1, windowSeconds: undefined }]);
  });

  it('ignores a malformed field as a whole (draft §7: "MUST be ignored")', () => {
    for (const bad of [
      '',
      ' ',
      '"default"', // r is required
      '"default";t=30',
      '"default";r=-1;t=30', // non-negative Integers only
      '"default";r=1;t=-5',
      '"default";r=1.5',
      '"default";r=1;t=1.5',
      '"default";r="3"',
      '"default";r=1e3',
      '"default";r=1;t=30,', // trailing comma
      '"default";r=1;t=30, "other";t=1', // one bad member spoils the List
      '("a" "b");r=1', // an Inner List is not a service-limit item
      '1;r=1', // the item must name a policy
      'limit=10, remaining=0, reset=30', // drafts 00–06 used another syntax
      '"unterminated;r=1',
      '"default";R=1', // keys are lower-case
      '"default";r=1234567890123456', // more than 15 digits
    ]) {
      expect(parseRateLimit(bad), bad).toBeUndefined();
    }
    expect(parseRateLimit(null)).toBeUndefined();
  });

  it('never throws on arbitrary input (property)', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const items = parseRateLimit(s);
        if (items) for (const i of items) expect(i.remaining).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('rateLimitWaitMs', () => {
  it('is the window of the exhausted policy, in ms (§6: r=0;t=10 asks for a 10 s wait)', () => {
    expect(rateLimitWaitMs('"problemPolicy";r=0;t=10')).toBe(10_000);
    // 15 digits of seconds (RFC 9651's largest Integer) overflow 2^53 ms: saturated, finite.
    expect(rateLimitWaitMs('"p";r=0;t=999999999999999')).toBe(Number.MAX_SAFE_INTEGER);
    expect(rateLimitWaitMs('"p";r=0;t=9007199254740')).toBe(9_007_199_254_740_000);
    expect(rateLimitWaitMs('"burst";r=0;t=2, "daily";r=900;t=3600')).toBe(2000);
  });

  it('takes the longest window when several policies are exhausted', () => {
    expect(rateLimitWaitMs('"a";r=0;t=2, "b";r=0;t=7, "c";r=0;t=3')).toBe(7000);
  });

  it('gives no wait while quota remains, without a window, or for a malformed field', () => {
    expect(rateLimitWaitMs('"default";r=1;t=7')).toBeUndefined();
    expect(rateLimitWaitMs('"default";r=0')).toBeUndefined();
    expect(rateLimitWaitMs('"default";r=0;t=-1')).toBeUndefined();
    expect(rateLimitWaitMs(null)).toBeUndefined();
  });
});
