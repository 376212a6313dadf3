import { describe, expect, it } from 'vitest';
import { serverHintMs } from './server-hint.js';

const response = (headers: Record<string, string>) => new Response(null, { status: 503, headers });

describe('serverHintMs', () => {
  it('reads Retry-After in seconds', () => {
    expect(serverHintMs(response({ 'retry-after': '2' }))).toBe(2000);
  });

  it("measures an HTTP-date from the response's own Date, not the skewed local clock", () => {
    const r = response({ date: 'Sun, 06 Nov 1994 08:49:37 GMT', 'retry-after': 'Sun, 06 Nov 1994 08:49:40 GMT' });
    expect(serverHintMs(r, Date.UTC(2026, 0, 1))).toBe(3000); // the local clock says 2026: ignored
  });

  it('falls back to nowMs when Date is missing or not an HTTP-date', () => {
    const at = Date.UTC(1994, 10, 6, 8, 49, 30);
    expect(serverHintMs(response({ 'retry-after': 'Sun, 06 Nov 1994 08:49:40 GMT' }), at)).toBe(10_000);
    const skew = response({ date: 'yesterday', 'retry-after': 'Sun, 06 Nov 1994 08:49:40 GMT' });
    expect(serverHintMs(skew, at)).toBe(10_000);
  });

  it('Retry-After takes precedence over RateLimit; RateLimit stands in when Retry-After is absent or garbage', () => {
    expect(serverHintMs(response({ 'retry-after': '1', ratelimit: '"default";r=0;t=30' }))).toBe(1000);
    expect(serverHintMs(response({ ratelimit: '"default";r=0;t=30' }))).toBe(30_000);
    expect(serverHintMs(response({ 'retry-after': '1e3', ratelimit: '"default";r=0;t=30' }))).toBe(30_000);
  });

  it('is undefined when the server gave no usable hint', () => {
    expect(serverHintMs(response({}))).toBeUndefined();
    expect(serverHintMs(response({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(serverHintMs(response({ ratelimit: '"default";r=4;t=30' }))).toBeUndefined();
  });
});

describe('serverHintMs: a repeated Retry-After', () => {
  const repeated = (...values: string[]) => {
    const headers = new Headers();
    for (const v of values) headers.append('retry-after', v);
    return new Response(null, { status: 503, headers });
  };

  it('waits for the longest value; the combined field still takes precedence over RateLimit', () => {
    expect(serverHintMs(repeated('0', '120'))).toBe(120_000);
    expect(serverHintMs(repeated('120', '0'))).toBe(120_000);
    const withRateLimit = repeated('0', '2');
    withRateLimit.headers.set('ratelimit', '"default";r=0;t=30');
    expect(serverHintMs(withRateLimit)).toBe(2000);
  });

  it("measures each date from the response's own Date", () => {
    const r = repeated('Sun, 06 Nov 1994 08:49:40 GMT', '1');
    r.headers.set('date', 'Sun, 06 Nov 1994 08:49:37 GMT');
    expect(serverHintMs(r, Date.UTC(2026, 0, 1))).toBe(3000);
  });

  it('a combined value none of whose parts reads leaves RateLimit to stand in', () => {
    const r = repeated('soon', '1e3');
    r.headers.set('ratelimit', '"default";r=0;t=30');
    expect(serverHintMs(r)).toBe(30_000);
  });
});
