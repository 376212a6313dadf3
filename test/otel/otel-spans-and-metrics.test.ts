// ebb/otel with the real OpenTelemetry SDK (sdk-trace-base's in-memory exporter, sdk-metrics'
// reader, the AsyncLocalStorage context manager): the spans, their parents, attributes and events
// for a call that retries twice, one that hedges and one an open breaker refuses; the metrics'
// names, units and values for each.
import { SpanStatusCode } from '@opentelemetry/api';
import { constant, noJitter, pipeline, retrying } from 'ebb';
import { otel } from 'ebb/otel';
import { adaptiveRate } from 'ebb/rate';
import { aimd, circuitBreaker, concurrencyLimit, hedging } from 'ebb/resilience';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { histogram, type Sdk, startSdk, value } from './support/sdk.js';

let sdk: Sdk;
beforeEach(() => {
  sdk = startSdk();
});
afterEach(async () => {
  await sdk.shutdown();
});

const fixed = (delayMs: number, maxAttempts: number) => constant({ delayMs, jitter: noJitter, maxAttempts });

describe('a call that fails twice, then succeeds', () => {
  it('is one call span with three attempt spans under it: original, retry, retry; resend counts 1 and 2; two waits', async () => {
    const t = otel({ api: sdk.api, name: 'prices', tracer: sdk.tracer, meter: sdk.meter });
    const p = pipeline([t.instrument(retrying({ backoff: fixed(20, 5) }))], { name: 'prices' });
    let n = 0;
    const value_ = await p.execute(() => {
      n++;
      if (n < 3) throw Object.assign(new Error('503'), { name: 'HttpError' });
      return 'ok';
    });
    expect(value_).toBe('ok');

    const spans = sdk.spans();
    const call = spans.find((s) => s.name === 'prices');
    const attempts = spans.filter((s) => s.name === 'prices attempt');
    expect(call).toBeDefined();
    expect(attempts).toHaveLength(3);
    for (const a of attempts) {
      expect(a.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
      expect(a.spanContext().traceId).toBe(call?.spanContext().traceId);
    }
    expect(attempts.map((a) => a.attributes['ebb.attempt.kind'])).toEqual(['original', 'retry', 'retry']);
    expect(attempts.map((a) => a.attributes['http.request.resend_count'])).toEqual([undefined, 1, 2]);
    expect(attempts.map((a) => a.attributes['ebb.attempt.number'])).toEqual([1, 2, 3]);
    expect(attempts.map((a) => a.attributes['ebb.attempt.outcome'])).toEqual(['failure', 'failure', 'success']);
    expect(attempts.map((a) => a.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
      SpanStatusCode.UNSET,
    ]);
    expect(attempts[0]?.attributes['error.type']).toBe('HttpError');
    expect(attempts.every((a) => a.attributes['ebb.pipeline.name'] === 'prices')).toBe(true);

    expect(call?.attributes['ebb.call.attempts']).toBe(3);
    expect(call?.attributes['ebb.call.outcome']).toBe('success');
    expect(call?.status.code).toBe(SpanStatusCode.UNSET);
    const waits = call?.events.filter((e) => e.name === 'ebb.wait') ?? [];
    expect(waits.map((w) => w.attributes?.['ebb.attempt.number'])).toEqual([2, 3]);
    // Each wait is at least the policy's 20 ms (timers never fire early); 1 ms of slack for the clock's rounding.
    for (const w of waits) expect(w.attributes?.['ebb.wait.duration']).toBeGreaterThanOrEqual(0.019);

    const m = await sdk.metrics();
    const at = { 'ebb.pipeline.name': 'prices' };
    expect(
      value(m.get('ebb.attempts'), { ...at, 'ebb.attempt.kind': 'original', 'ebb.attempt.outcome': 'failure' }),
    ).toBe(1);
    expect(value(m.get('ebb.attempts'), { ...at, 'ebb.attempt.kind': 'retry', 'ebb.attempt.outcome': 'failure' })).toBe(
      1,
    );
    expect(value(m.get('ebb.attempts'), { ...at, 'ebb.attempt.kind': 'retry', 'ebb.attempt.outcome': 'success' })).toBe(
      1,
    );
    expect(value(m.get('ebb.attempts'))).toBe(3);
    expect(value(m.get('ebb.calls'), { ...at, 'ebb.call.outcome': 'success' })).toBe(1);
    const retries = histogram(m.get('ebb.call.retries'), at);
    expect([retries.count, retries.sum]).toEqual([1, 2]);
    const delay = histogram(m.get('ebb.call.retry_delay'), at);
    expect(delay.count).toBe(1);
    expect(delay.sum).toBeGreaterThanOrEqual(0.038);
    expect(histogram(m.get('ebb.call.duration'), at).sum).toBeGreaterThanOrEqual(delay.sum as number);
    expect(histogram(m.get('ebb.attempt.duration'), { ...at, 'ebb.attempt.kind': 'original' }).count).toBe(1);
    expect(value(m.get('ebb.amplification'), at)).toBe(3);

    // Names and units, as OpenTelemetry's conventions and gRPC A66/A96 write them.
    const units = Object.fromEntries([...m].map(([name, metric]) => [name, metric.descriptor.unit]));
    expect(units).toEqual({
      'ebb.calls': '{call}',
      'ebb.call.duration': 's',
      'ebb.attempts': '{attempt}',
      'ebb.attempt.duration': 's',
      'ebb.call.retries': '{retry}',
      'ebb.call.retry_delay': 's',
      'ebb.amplification': '1',
    });
    t.close();
  });
});

describe('a call that hedges', () => {
  it('starts a hedge while the original runs: kind hedge, resend count 1; the loser ends cancelled, the call succeeds', async () => {
    const t = otel({ api: sdk.api, name: 'search', tracer: sdk.tracer, meter: sdk.meter });
    const hedger = hedging({ delayMs: 20 });
    // hedging() runs inside an attempt; this adapter makes it a mechanism, so that each hedged attempt is an attempt of the call.
    const hedge = { execute: <T>(next: (c: never) => Promise<T>) => hedger.run((h) => next(h as never)) };
    const p = pipeline([t.instrument(retrying({ backoff: fixed(10, 3) }), hedge)], { name: 'search' });
    const result = await p.execute(
      ({ attempt, signal }) =>
        new Promise<string>((resolve, reject) => {
          // The original hangs until it loses; the hedge answers at once.
          if (attempt === 1) signal.addEventListener('abort', () => reject(signal.reason));
          else resolve('fast');
        }),
    );
    expect(result).toBe('fast');

    const spans = sdk.spans();
    const call = spans.find((s) => s.name === 'search');
    const attempts = spans.filter((s) => s.name === 'search attempt');
    expect(attempts.map((a) => a.attributes['ebb.attempt.kind']).sort()).toEqual(['hedge', 'original']);
    const original = attempts.find((a) => a.attributes['ebb.attempt.kind'] === 'original');
    const hedged = attempts.find((a) => a.attributes['ebb.attempt.kind'] === 'hedge');
    expect(hedged?.attributes['http.request.resend_count']).toBe(1);
    expect(hedged?.attributes['ebb.attempt.outcome']).toBe('success');
    expect(original?.attributes['ebb.attempt.outcome']).toBe('cancelled');
    expect(original?.attributes['http.request.resend_count']).toBeUndefined();
    for (const a of attempts) expect(a.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
    // A hedge is no wait: the call never had a moment with no attempt running.
    expect(call?.events.filter((e) => e.name === 'ebb.wait')).toEqual([]);

    const m = await sdk.metrics();
    const at = { 'ebb.pipeline.name': 'search' };
    expect(value(m.get('ebb.attempts'), { ...at, 'ebb.attempt.kind': 'hedge', 'ebb.attempt.outcome': 'success' })).toBe(
      1,
    );
    expect(
      value(m.get('ebb.attempts'), { ...at, 'ebb.attempt.kind': 'original', 'ebb.attempt.outcome': 'cancelled' }),
    ).toBe(1);
    expect(value(m.get('ebb.attempts'), { ...at, 'ebb.attempt.kind': 'retry' })).toBe(0);
    expect(histogram(m.get('ebb.call.retries'), at).sum).toBe(1);
    expect(histogram(m.get('ebb.call.retry_delay'), at).sum).toBe(0);
    // Both attempts left the process: two requests for one call.
    expect(value(m.get('ebb.amplification'), at)).toBe(2);
    t.close();
  });
});

describe('a call refused by an open breaker', () => {
  it('is a refused attempt span with the refusal event and no call of the operation; the opening shows on the span that caused it', async () => {
    const breaker = circuitBreaker({ consecutiveFailures: 1, openBackoff: fixed(60_000, Infinity) });
    const t = otel({ api: sdk.api, name: 'orders', tracer: sdk.tracer, meter: sdk.meter, breaker });
    // A refusal that asks for more than maxRetryAfterMs ends the call at once.
    const p = pipeline([t.instrument(retrying({ backoff: fixed(10, 3), maxRetryAfterMs: 1_000 })), breaker], {
      name: 'orders',
    });
    let calls = 0;
    const failing = () => {
      calls++;
      throw new Error('down');
    };
    await expect(p.execute(failing)).rejects.toMatchObject({ code: 'EBB_RETRY_GAVE_UP', reason: 'retry-after' });
    expect(calls).toBe(1);
    expect(breaker.state).toBe('open');
    await expect(p.execute(failing)).rejects.toMatchObject({ code: 'EBB_RETRY_GAVE_UP', reason: 'retry-after' });
    expect(calls).toBe(1);

    const spans = sdk.spans();
    const [first, second] = spans.filter((s) => s.name === 'orders');
    const attempts = spans.filter((s) => s.name === 'orders attempt');
    // First call: attempt 1 failed and opened the circuit (the state change is its event); attempt 2 was refused.
    const ofFirst = attempts.filter((a) => a.parentSpanContext?.spanId === first?.spanContext().spanId);
    expect(ofFirst.map((a) => a.attributes['ebb.attempt.outcome'])).toEqual(['failure', 'refused']);
    const change = ofFirst[0]?.events.find((e) => e.name === 'ebb.circuit_breaker.state_change');
    expect(change?.attributes).toEqual({
      'ebb.circuit_breaker.previous_state': 'closed',
      'ebb.circuit_breaker.state': 'open',
      'ebb.circuit_breaker.reason': 'consecutive-failures',
    });
    // Second call: one attempt, refused, never reaching the operation.
    const ofSecond = attempts.filter((a) => a.parentSpanContext?.spanId === second?.spanContext().spanId);
    expect(ofSecond).toHaveLength(1);
    const refused = ofSecond[0];
    expect(refused?.attributes['ebb.attempt.outcome']).toBe('refused');
    expect(refused?.attributes['error.type']).toBe('EBB_CIRCUIT_OPEN');
    const event = refused?.events.find((e) => e.name === 'ebb.refusal');
    expect(event?.attributes?.['ebb.refusal.reason']).toBe('circuit_open');
    // The rest of a 60 s open period, in seconds.
    expect(event?.attributes?.['ebb.refusal.retry_after']).toBeGreaterThan(50);
    expect(event?.attributes?.['ebb.refusal.retry_after']).toBeLessThanOrEqual(60);
    expect(second?.status.code).toBe(SpanStatusCode.ERROR);
    expect(second?.attributes['error.type']).toBe('EBB_RETRY_GAVE_UP');

    const m = await sdk.metrics();
    const at = { 'ebb.pipeline.name': 'orders' };
    expect(value(m.get('ebb.refusals'), { ...at, 'ebb.refusal.reason': 'circuit_open' })).toBe(2);
    expect(value(m.get('ebb.attempts'), { ...at, 'ebb.attempt.outcome': 'refused' })).toBe(2);
    expect(value(m.get('ebb.calls'), { ...at, 'ebb.call.outcome': 'failure' })).toBe(2);
    expect(value(m.get('ebb.circuit_breaker.state'), { ...at, 'ebb.circuit_breaker.state': 'open' })).toBe(1);
    expect(value(m.get('ebb.circuit_breaker.state'), { ...at, 'ebb.circuit_breaker.state': 'closed' })).toBe(0);
    expect(value(m.get('ebb.circuit_breaker.transitions'), { ...at, 'ebb.circuit_breaker.state': 'open' })).toBe(1);
    expect(m.get('ebb.circuit_breaker.state')?.descriptor.unit).toBe('1');
    expect(m.get('ebb.refusals')?.descriptor.unit).toBe('{refusal}');
    // One request left the process for two calls: refused attempts are not requests.
    expect(value(m.get('ebb.amplification'), at)).toBe(0.5);
    t.close();
  });
});

describe('the state of a concurrency limit and a rate controller', () => {
  it('reads the limit, the requests in flight and waiting, and the rate, as the SDK collects; a full limit’s refusal is counted by reason', async () => {
    const limit = concurrencyLimit({ algorithm: aimd({ initialLimit: 1 }), maxQueue: 0 });
    const rate = adaptiveRate({ initialRatePerSecond: 50 });
    const t = otel({ api: sdk.api, name: 'stock', tracer: sdk.tracer, meter: sdk.meter, limit, rate });
    // One attempt a call, so that the refusal ends the call.
    const p = pipeline([t.instrument(), limit], { name: 'stock' });
    let release: (v: string) => void = () => undefined;
    const held = p.execute(() => new Promise<string>((r) => (release = r)));
    await expect(p.execute(() => 'second')).rejects.toMatchObject({ code: 'EBB_LIMIT_EXCEEDED' });

    const at = { 'ebb.pipeline.name': 'stock' };
    let m = await sdk.metrics();
    expect(value(m.get('ebb.concurrency_limit.limit'), at)).toBe(1);
    expect(value(m.get('ebb.concurrency_limit.inflight'), at)).toBe(1);
    expect(value(m.get('ebb.concurrency_limit.queued'), at)).toBe(0);
    expect(value(m.get('ebb.rate_controller.rate'), at)).toBe(rate.ratePerSecond);
    expect(value(m.get('ebb.refusals'), { ...at, 'ebb.refusal.reason': 'limit_exceeded' })).toBe(1);
    expect(m.get('ebb.rate_controller.rate')?.descriptor.unit).toBe('{request}/s');
    expect(m.get('ebb.concurrency_limit.inflight')?.descriptor.unit).toBe('{request}');

    release('first');
    expect(await held).toBe('first');
    m = await sdk.metrics();
    expect(value(m.get('ebb.concurrency_limit.inflight'), at)).toBe(0);
    t.close();
  });
});

describe('a call its caller aborts', () => {
  it('ends as cancelled, not failure: the ebb.calls counter and the call span say so; a timeout stays a failure', async () => {
    const t = otel({ api: sdk.api, name: 'search', tracer: sdk.tracer, meter: sdk.meter });
    const p = pipeline([t.instrument(retrying({ backoff: fixed(10_000, 5) }))], { name: 'search' });
    const controller = new AbortController();
    const aborted = p.execute(
      () => {
        throw new Error('503');
      },
      { signal: controller.signal },
    );
    // The first attempt failed; the call waits 10 s for its retry when the user leaves the page.
    setTimeout(() => controller.abort(), 20);
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    const timedOut = p.execute(
      () => {
        throw new Error('503');
      },
      { signal: AbortSignal.timeout(20) },
    );
    await expect(timedOut).rejects.toMatchObject({ name: 'TimeoutError' });

    const calls = sdk.spans().filter((s) => s.name === 'search');
    expect(calls.map((s) => s.attributes['ebb.call.outcome'])).toEqual(['cancelled', 'failure']);
    const m = await sdk.metrics();
    const at = { 'ebb.pipeline.name': 'search' };
    expect(value(m.get('ebb.calls'), { ...at, 'ebb.call.outcome': 'cancelled' })).toBe(1);
    expect(value(m.get('ebb.calls'), { ...at, 'ebb.call.outcome': 'failure' })).toBe(1);
  });
});
