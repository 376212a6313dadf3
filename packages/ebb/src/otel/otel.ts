import { type Clock, clockOption } from '../core/clock.js';
import { check, checkKeys, mistyped, optionsObject } from '../core/validate.js';
import type { AdaptiveRateController } from '../rate/controller.js';
import { WindowedAdder } from '../rate/windowed-adder.js';
import type { CircuitBreaker } from '../resilience/breaker-types.js';
import type { ConcurrencyLimit } from '../resilience/concurrency-limit.js';
import type { AttemptContext } from '../retry/contexts.js';
import { describeThrown, prop } from '../retry/errors.js';
import { type Mechanism, mechanismAt } from '../retry/mechanism.js';
import type { OtelApi, OtelAttributes, OtelContext, OtelMeter, OtelSpan, OtelTracer } from './api.js';
import { observeState } from './gauges.js';
import { ATTR, BUCKETS, EVENTS, INSTRUMENTS, REFUSALS } from './names.js';

/** Options of {@link otel}. */
export interface OtelOptions {
  /**
   * The OpenTelemetry API: `import * as api from '@opentelemetry/api'` (1.x). Passed in, not
   * imported, so that ebb has no dependency and uses the very copy of the API the program
   * registered its SDK with. Required.
   */
  readonly api: OtelApi;
  /**
   * The pipeline's name: the `ebb.pipeline.name` attribute of every span and measurement, and the
   * call span's name. Give the name you gave `pipeline()`. Default none (the spans are named `ebb`).
   */
  readonly name?: string;
  /** The tracer. Default `api.trace.getTracer('ebb')`, which follows the registered provider. */
  readonly tracer?: OtelTracer;
  /**
   * The meter. Default `api.metrics.getMeter('ebb')`, read once here: make the instrument after
   * the SDK's meter provider is registered, or pass the meter.
   */
  readonly meter?: OtelMeter;
  /** A circuit breaker to report: its state (a gauge), its changes (a counter and span events). */
  readonly breaker?: Pick<CircuitBreaker, 'state' | 'subscribe'>;
  /** A concurrency limit to report: its limit, the requests in flight and those waiting. */
  readonly limit?: Pick<ConcurrencyLimit, 'limit' | 'inflight' | 'queued'>;
  /** A rate controller of `ebb/rate` to report: its rate, in requests per second. */
  readonly rate?: Pick<AdaptiveRateController, 'ratePerSecond'>;
  /**
   * A retry budget to report: what it holds now — `tokenBudget()`'s `tokens`, `ratioBudget()`'s
   * `balance`, `awsRetryQuota()`'s `available`.
   */
  readonly budget?: { readonly tokens: number } | { readonly balance: number } | { readonly available: number };
  /** The window of the amplification gauge, in ms. Default 60 000 (a minute, in ten slices). */
  readonly windowMs?: number;
  /** The clock of the durations and the window. Default the system clock. */
  readonly clock?: Clock;
}

/** What {@link otel} returns: the instrumented mechanism maker, and `close()`. */
export interface Otel {
  /**
   * One mechanism that runs `mechanisms` (outer to inner, as a pipeline does) inside a span per
   * logical call, and everything after it in the pipeline inside a span per attempt. Give it the
   * mechanisms that make attempts — `retrying()`, a hedging mechanism — and put the guards after
   * it, so that the attempts see their refusals:
   * `pipeline([t.instrument(retrying()), circuitBreaker(), limit])`. With no mechanism, one
   * attempt per call. A hand-written guard (`acquire`/`record`) goes in wrapped, as in a
   * pipeline: `guard(myGuard)`.
   */
  instrument(...mechanisms: readonly Mechanism[]): Mechanism;
  /** Stops observing: removes the gauges' callbacks and the breaker listener. Idempotent. */
  close(): void;
}

/** One logical call in flight: what its attempts add to. */
class Call {
  /** Attempts started. */
  started = 0;
  /** Attempts running now. */
  running = 0;
  /** When the last attempt ended (the clock's reading). */
  lastEnd = 0;
  /** Time with no attempt running, between attempts, in ms. */
  waitedMs = 0;
  constructor(
    readonly span: OtelSpan,
    /** The active context with the call's span: the parent of every attempt's span; undefined for a no-op span. */
    readonly context: OtelContext | undefined,
    readonly start: number,
  ) {}
}

/** What a mechanism runs inside it. */
type Next<T> = (context: AttemptContext) => Promise<T>;

/** The trace id of OpenTelemetry's invalid span context: the no-op tracer's spans carry it. */
const INVALID_TRACE_ID = '00000000000000000000000000000000';

/**
 * Whether a span takes part in a trace: it records, or it carries a real trace (a span the
 * sampler dropped still tells its children so). The no-op tracer's spans do neither: no context
 * is made for them, and nothing is made active (the cost of ebb/otel with no SDK registered).
 */
const traced = (span: OtelSpan): boolean => span.isRecording() || span.spanContext().traceId !== INVALID_TRACE_ID;

/** OpenTelemetry's `SpanStatusCode.ERROR`; `SpanKind.INTERNAL` is 0. */
const ERROR = 2;

/** An error's `error.type`: its `code` when it has a string one (ebb's errors do), else its `name`. */
function errorType(error: unknown): string {
  const code = prop(error, 'code');
  if (typeof code === 'string') return code;
  const name = prop(error, 'name');
  return typeof name === 'string' ? name : '_OTHER';
}

/**
 * OpenTelemetry for a pipeline: traces and metrics of its logical calls and their attempts, the
 * waits and refusals between them, and the state of its breaker, limit, rate and budget — with
 * the **amplification** gauge, attempts that left the process ÷ logical calls over a window,
 * the number the metastable-failure studies say an operator of a retrying fleet needs.
 *
 * Placement: `t.instrument(…)` around the mechanisms that make attempts (`retrying()`, hedging),
 * first in the pipeline; the guards after it:
 * `pipeline([t.instrument(retrying()), circuitBreaker(), limit], { name })`.
 *
 * - **Spans**: one per logical call (named after the pipeline), its child per attempt with
 *   `http.request.resend_count` (OpenTelemetry's stable HTTP convention: 1 on the second attempt,
 *   and on), `ebb.attempt.kind` (`original`, `retry`, or `hedge` — an attempt that starts while
 *   another of its call runs) and `ebb.attempt.outcome`; a failed attempt's span has status
 *   ERROR and `error.type`. Events: `ebb.wait` on the call's span (each wait between attempts,
 *   in seconds), `ebb.refusal` on a refused attempt's span (reason, the wait it asked for),
 *   `ebb.circuit_breaker.state_change` on the span active when the breaker changed.
 * - **Metrics** (names and their sources in `names.ts` and docs/telemetry.md): `ebb.calls`,
 *   `ebb.call.duration`, `ebb.attempts`, `ebb.attempt.duration`, `ebb.call.retries`,
 *   `ebb.call.retry_delay`, `ebb.refusals`, `ebb.circuit_breaker.state`,
 *   `ebb.circuit_breaker.transitions`, `ebb.concurrency_limit.*`, `ebb.rate_controller.rate`,
 *   `ebb.retry_budget.level`, `ebb.amplification`.
 *
 * How the parts find each other: each attempt is tied to its call by the mechanism itself, not by
 * the active context — ebb's retries wait in one process-wide timer queue, and a wake-up runs in
 * the async context of whichever call armed the host timer, so the active context after a wait
 * may be another call's. The attempt's span is made active explicitly around what runs inside it
 * (the operation, the guards), so instrumentation of `fetch` or a database client under it
 * nests under the right attempt.
 *
 * Gotchas: a refused attempt never left the process: it is counted in `ebb.attempts` (outcome
 * `refused`) but not in the amplification. Nothing here can fail a call: what the SDK or a
 * reported object throws is dropped.
 *
 * @example
 * import * as api from '@opentelemetry/api';
 * const t = otel({ api, name: 'prices', breaker });
 * const prices = pipeline([t.instrument(retrying()), breaker], { name: 'prices' });
 */
export function otel(options: OtelOptions): Otel {
  const where = 'otel()';
  const o = optionsObject(where, options) as OtelOptions;
  // The API module passed where the options go (otel(api)) would be read by its own keys.
  if (typeof (o as { trace?: { getTracer?: unknown } }).trace?.getTracer === 'function') {
    throw new TypeError(`${where}: got the OpenTelemetry API where the options go. Pass otel({ api, name }).`);
  }
  checkKeys(where, o, ['api', 'name', 'tracer', 'meter', 'breaker', 'limit', 'rate', 'budget', 'windowMs', 'clock']);
  const api = o.api;
  if (
    typeof api !== 'object' ||
    api === null ||
    typeof api.trace?.getTracer !== 'function' ||
    typeof api.context?.with !== 'function' ||
    typeof api.metrics?.getMeter !== 'function' ||
    typeof api.createContextKey !== 'function'
  ) {
    mistyped(where, 'api', api, 'the @opentelemetry/api module', "Pass `import * as api from '@opentelemetry/api'`.");
  }
  const name = o.name;
  if (name !== undefined && typeof name !== 'string') mistyped(where, 'name', name, 'a string');
  for (const key of ['breaker', 'limit', 'rate', 'budget'] as const) {
    const v = o[key];
    if (v !== undefined && (typeof v !== 'object' || v === null)) mistyped(where, key, v, 'an object');
  }
  if (o.breaker && typeof o.breaker.subscribe !== 'function') {
    mistyped(where, 'breaker', o.breaker, 'a circuit breaker { state, subscribe() }', 'Pass circuitBreaker().');
  }
  const windowMs = check(where, 'windowMs', o.windowMs, { min: 10, fix: 'For example 60000.' }, 60_000);
  const clock = clockOption(where, o.clock);
  const tracer = o.tracer ?? api.trace.getTracer('ebb');
  const meter = o.meter ?? api.metrics.getMeter('ebb');
  if (typeof tracer?.startSpan !== 'function') mistyped(where, 'tracer', tracer, 'a Tracer { startSpan() }');
  if (typeof meter?.createCounter !== 'function') mistyped(where, 'meter', meter, 'a Meter { createCounter() }');

  /** The clock, read safely: a throw or a non-finite or backward reading repeats the last one. */
  let last = 0;
  const now = (): number => {
    try {
      const t = clock.now();
      if (Number.isFinite(t) && t > last) last = t;
    } catch {
      // A clock that throws cannot fail a call here: the last reading stands.
    }
    return last;
  };
  last = now();

  const base: OtelAttributes = name === undefined ? {} : { [ATTR.pipeline]: name };
  const spanName = name ?? 'ebb';
  const attemptName = `${spanName} attempt`;
  const I = INSTRUMENTS;
  const seconds = { advice: { explicitBucketBoundaries: [...BUCKETS.seconds] } };
  const counts = { advice: { explicitBucketBoundaries: [...BUCKETS.counts] } };
  const calls = meter.createCounter(I.calls.name, I.calls);
  const callDuration = meter.createHistogram(I.callDuration.name, { ...I.callDuration, ...seconds });
  const attempts = meter.createCounter(I.attempts.name, I.attempts);
  const attemptDuration = meter.createHistogram(I.attemptDuration.name, { ...I.attemptDuration, ...seconds });
  const callRetries = meter.createHistogram(I.callRetries.name, { ...I.callRetries, ...counts });
  const retryDelay = meter.createHistogram(I.retryDelay.name, { ...I.retryDelay, ...seconds });
  const refusals = meter.createCounter(I.refusals.name, I.refusals);
  // The windows read the reading just taken (every add follows one), not the clock again; the
  // gauge reads the clock before it sums, so that a window with no traffic still moves on.
  const lastReading = () => last;
  const windowCalls = new WindowedAdder(windowMs, 10, lastReading);
  const windowAttempts = new WindowedAdder(windowMs, 10, lastReading);
  const callOk: OtelAttributes = { ...base, [ATTR.callOutcome]: 'success' };
  const callFailed: OtelAttributes = { ...base, [ATTR.callOutcome]: 'failure' };
  // A call its caller aborted (an `AbortError`) is no failure of the service: dashboards that
  // divide failures by calls should not see a user's cancelled page load.
  const callCancelled: OtelAttributes = { ...base, [ATTR.callOutcome]: 'cancelled' };
  // The attribute sets the hot path hands the SDK, made once: a call builds no object for them.
  const callStart = { kind: 0, attributes: base };
  const KINDS = ['original', 'retry', 'hedge'] as const;
  const OUTCOMES = ['success', 'failure', 'refused', 'cancelled'] as const;
  const attemptStart: Record<string, { kind: number; attributes: OtelAttributes }> = {};
  const ended: Record<string, Record<string, OtelAttributes>> = {};
  for (const k of KINDS) {
    attemptStart[k] = { kind: 0, attributes: { ...base, [ATTR.kind]: k } };
    const byOutcome: Record<string, OtelAttributes> = {};
    for (const out of OUTCOMES) byOutcome[out] = { ...base, [ATTR.kind]: k, [ATTR.outcome]: out };
    ended[k] = byOutcome;
  }

  const close = observeState(meter, api, base, o, (r) => {
    now();
    const c = windowCalls.sum();
    if (c > 0) r.observe(windowAttempts.sum() / c, base);
  });

  const callEnded = (call: Call, error: unknown, ok: boolean): void => {
    try {
      const attrs = ok ? callOk : prop(error, 'name') === 'AbortError' ? callCancelled : callFailed;
      calls.add(1, attrs);
      // The call ends as its last attempt does, when nothing runs after it: one clock reading less.
      const end = call.running === 0 && call.started > 0 ? call.lastEnd : now();
      callDuration.record((end - call.start) / 1000, attrs);
      if (call.started > 0) {
        callRetries.record(call.started - 1, base);
        retryDelay.record(call.waitedMs / 1000, base);
      }
      const span = call.span;
      span.setAttribute(ATTR.callAttempts, call.started);
      span.setAttribute(ATTR.callOutcome, attrs[ATTR.callOutcome] as string);
      if (!ok) {
        if (prop(error, 'code') === 'EBB_RETRY_GAVE_UP' && prop(error, 'reason') === 'budget') {
          refusals.add(1, { ...base, [ATTR.reason]: 'retry_budget' });
          span.addEvent(EVENTS.refusal, { [ATTR.reason]: 'retry_budget' });
        }
        span.setAttribute(ATTR.errorType, errorType(error));
        span.setStatus({ code: ERROR, message: describeThrown(error) });
      }
      span.end();
    } catch {
      // Nothing to tell: the call's own outcome goes to the caller.
    }
  };

  const attemptEnded = (
    call: Call | undefined,
    span: OtelSpan | undefined,
    kind: string,
    start: number,
    error: unknown,
    ok: boolean,
  ) => {
    try {
      const end = now();
      if (call) {
        call.running--;
        call.lastEnd = end;
      }
      const reason = ok ? undefined : REFUSALS[prop(error, 'code') as string];
      const outcome = ok
        ? 'success'
        : reason
          ? 'refused'
          : prop(error, 'name') === 'AbortError'
            ? 'cancelled'
            : 'failure';
      if (reason === undefined) windowAttempts.add(1);
      const attrs = (ended[kind] as Record<string, OtelAttributes>)[outcome] as OtelAttributes;
      attempts.add(1, attrs);
      attemptDuration.record((end - start) / 1000, attrs);
      if (reason !== undefined) refusals.add(1, { ...base, [ATTR.reason]: reason });
      if (span === undefined) return;
      span.setAttribute(ATTR.outcome, outcome);
      if (reason !== undefined) {
        const after = prop(error, 'retryAfterMs');
        span.addEvent(
          EVENTS.refusal,
          typeof after === 'number' && Number.isFinite(after)
            ? { [ATTR.reason]: reason, [ATTR.retryAfter]: after / 1000 }
            : { [ATTR.reason]: reason },
        );
      }
      if (!ok) {
        span.setAttribute(ATTR.errorType, errorType(error));
        span.setStatus({ code: ERROR, message: describeThrown(error) });
      }
      span.end();
    } catch {
      // As for the call.
    }
  };

  /** One attempt of `call`: its span, active around `next`; its kind by what else of the call runs. */
  const runAttempt = <T>(call: Call | undefined, next: Next<T>, context: AttemptContext): Promise<T> => {
    let span: OtelSpan | undefined;
    let kind: string;
    let start: number;
    let inner: OtelContext | undefined;
    try {
      // A call's first attempt starts when the call does: one clock reading less.
      start = call !== undefined && call.started === 0 ? call.start : now();
      const n = context.attempt;
      if (call === undefined) kind = n > 1 ? 'retry' : 'original';
      else {
        kind = call.started === 0 ? 'original' : call.running > 0 ? 'hedge' : 'retry';
        if (kind === 'retry') {
          const waited = start - call.lastEnd;
          call.waitedMs += waited;
          if (call.context !== undefined)
            call.span.addEvent(EVENTS.wait, { [ATTR.waitDuration]: waited / 1000, [ATTR.number]: n });
        }
        call.started++;
        call.running++;
      }
      // Under a call whose span is the no-op tracer's, no span at all: the tracer is a no-op.
      if (call === undefined || call.context !== undefined) {
        const parent = call?.context ?? api.context.active();
        span = tracer.startSpan(attemptName, attemptStart[kind], parent);
        // Attributes that vary by attempt, only on a span that records.
        if (span.isRecording()) {
          span.setAttribute(ATTR.number, n);
          if (n > 1) span.setAttribute(ATTR.resendCount, n - 1);
        }
        if (traced(span)) inner = api.trace.setSpan(parent, span);
      }
    } catch {
      return next(context);
    }
    return (inner === undefined ? next(context) : api.context.with(inner, next, undefined, context)).then(
      (value) => {
        attemptEnded(call, span, kind, start, undefined, true);
        return value;
      },
      (error: unknown) => {
        attemptEnded(call, span, kind, start, error, false);
        throw error;
      },
    );
  };

  const instrument = (...mechanisms: readonly Mechanism[]): Mechanism => {
    const steps = mechanisms.map((m, i) => mechanismAt('otel().instrument()', `mechanisms[${i}]`, m));
    const n = steps.length;
    return {
      execute<T>(next: Next<T>, context: AttemptContext): Promise<T> {
        let c: Call | undefined;
        try {
          const start = now();
          windowCalls.add(1);
          const parent = api.context.active();
          const span = tracer.startSpan(spanName, callStart, parent);
          c = new Call(span, traced(span) ? api.trace.setSpan(parent, span) : undefined, start);
        } catch {
          // The SDK failed: the call runs without its telemetry.
        }
        // The mechanisms given, outer to inner, then the attempt around the rest of the pipeline.
        const run = (i: number, ctx: AttemptContext): Promise<T> => {
          if (i === n) return runAttempt(c, next, ctx);
          try {
            return Promise.resolve((steps[i] as Mechanism).execute((x) => run(i + 1, x), ctx));
          } catch (error) {
            return Promise.reject(error);
          }
        };
        if (c === undefined) return run(0, context);
        const call = c;
        const inner = call.context;
        return (inner === undefined ? run(0, context) : api.context.with(inner, run, undefined, 0, context)).then(
          (value) => {
            callEnded(call, undefined, true);
            return value;
          },
          (error: unknown) => {
            callEnded(call, error, false);
            throw error;
          },
        );
      },
    };
  };

  return { instrument, close };
}
