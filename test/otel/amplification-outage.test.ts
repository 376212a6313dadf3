// The amplification gauge against a real node:http server on 127.0.0.1 during a total outage
// (every request answered 503): the gauge read through the real OpenTelemetry SDK equals the
// requests the server received ÷ the logical calls made — with plain retries, with a token
// budget that stops retrying, and with concurrent calls sharing the pipeline.
import { constant, noJitter, pipeline, retrying } from 'ebb';
import { otel } from 'ebb/otel';
import { tokenBudget } from 'ebb/rate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../http/support/server.js';
import { type Sdk, startSdk, value } from './support/sdk.js';

let sdk: Sdk;
let server: TestServer;
beforeEach(async () => {
  sdk = startSdk();
  server = await startServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'text/plain' });
    res.end('down');
  });
});
afterEach(async () => {
  await server.close();
  await sdk.shutdown();
});

const CALLS = 40;
const BATCH = 10;

/** Runs CALLS logical calls, BATCH at a time, each a fetch that fails on a 503; counts how they end. */
async function outage(execute: (op: () => Promise<string>) => Promise<string>, active: string[] = []): Promise<number> {
  let failed = 0;
  const op = async () => {
    active.push(sdk.api.trace.getActiveSpan()?.spanContext().spanId ?? 'none');
    const res = await fetch(`${server.origin}/item`);
    await res.text();
    if (!res.ok) throw Object.assign(new Error(`HTTP ${res.status}`), { status: res.status });
    return 'ok';
  };
  for (let i = 0; i < CALLS; i += BATCH) {
    const batch = Array.from({ length: BATCH }, () => execute(op).then(undefined, () => failed++));
    await Promise.all(batch);
  }
  return failed;
}

describe('the amplification gauge during a total outage', () => {
  it('reads requests received ÷ logical calls: 3 with three attempts per call and no budget', async () => {
    const t = otel({ api: sdk.api, name: 'catalog', tracer: sdk.tracer, meter: sdk.meter });
    const backoff = constant({ delayMs: 2, jitter: noJitter, maxAttempts: 3 });
    const p = pipeline([t.instrument(retrying({ backoff, budget: false }))], { name: 'catalog' });
    const active: string[] = [];
    expect(await outage((op) => p.execute(op), active)).toBe(CALLS);

    const m = await sdk.metrics();
    const at = { 'ebb.pipeline.name': 'catalog' };
    expect(server.seen.length).toBe(CALLS * 3);
    expect(value(m.get('ebb.amplification'), at)).toBe(server.seen.length / CALLS);
    expect(value(m.get('ebb.attempts'), at)).toBe(server.seen.length);
    expect(value(m.get('ebb.attempts'), { ...at, 'ebb.attempt.kind': 'original' })).toBe(CALLS);
    expect(value(m.get('ebb.attempts'), { ...at, 'ebb.attempt.kind': 'hedge' })).toBe(0);
    expect(value(m.get('ebb.calls'), { ...at, 'ebb.call.outcome': 'failure' })).toBe(CALLS);

    // Ten calls at a time wait in one shared timer queue, yet every attempt's span is a child of
    // its own call's span (three each), and the operation ran with its own attempt's span active.
    const spans = sdk.spans();
    const callSpans = spans.filter((s) => s.name === 'catalog');
    const attemptSpans = spans.filter((s) => s.name === 'catalog attempt');
    expect(callSpans).toHaveLength(CALLS);
    for (const call of callSpans) {
      const mine = attemptSpans.filter((a) => a.parentSpanContext?.spanId === call.spanContext().spanId);
      expect(mine.map((a) => a.attributes['ebb.attempt.kind'])).toEqual(['original', 'retry', 'retry']);
      expect(call.events.filter((e) => e.name === 'ebb.wait')).toHaveLength(2);
    }
    expect(active.slice().sort()).toEqual(attemptSpans.map((a) => a.spanContext().spanId).sort());
    t.close();
  });

  it('reads requests received ÷ logical calls with a token budget that stops retrying, and counts its refusals and level', async () => {
    const budget = tokenBudget();
    const t = otel({ api: sdk.api, name: 'catalog', tracer: sdk.tracer, meter: sdk.meter, budget });
    const backoff = constant({ delayMs: 2, jitter: noJitter, maxAttempts: 3 });
    const p = pipeline([t.instrument(retrying({ backoff, budget }))], { name: 'catalog' });
    expect(await outage((op) => p.execute(op))).toBe(CALLS);

    const m = await sdk.metrics();
    const at = { 'ebb.pipeline.name': 'catalog' };
    const received = server.seen.length;
    // The budget let a few retries through, then none: well under the 3× of plain retries.
    expect(received).toBeGreaterThan(CALLS);
    expect(received).toBeLessThan(CALLS * 1.5);
    expect(value(m.get('ebb.amplification'), at)).toBe(received / CALLS);
    const retried = value(m.get('ebb.attempts'), { ...at, 'ebb.attempt.kind': 'retry' });
    expect(retried).toBe(received - CALLS);
    // Every call the budget stopped is one refusal; the others used their three attempts.
    const refusedByBudget = value(m.get('ebb.refusals'), { ...at, 'ebb.refusal.reason': 'retry_budget' });
    expect(refusedByBudget).toBeGreaterThan(0);
    expect(received).toBeGreaterThanOrEqual((CALLS - refusedByBudget) * 3 + refusedByBudget);
    expect(value(m.get('ebb.retry_budget.level'), at)).toBe(budget.tokens);
    expect(budget.tokens).toBeLessThanOrEqual(5);
    t.close();
  });
});
