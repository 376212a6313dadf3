// The part of `@opentelemetry/api` (1.x) that ebb/otel calls, written as structural types: the
// module itself (`import * as api from '@opentelemetry/api'`) satisfies them, and ebb's
// declarations reference no package a program may not have installed.

/** Attribute values, as OpenTelemetry's `Attributes`. */
export type OtelAttributes = Record<string, string | number | boolean | undefined>;

/** OpenTelemetry's `Context`: an immutable map. */
export interface OtelContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): OtelContext;
}

/** OpenTelemetry's `Span`, the methods ebb calls. */
export interface OtelSpan {
  setAttribute(key: string, value: string | number | boolean): unknown;
  addEvent(name: string, attributes?: OtelAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: { name?: string; message?: string; code?: string | number } | string): void;
  end(): void;
  isRecording(): boolean;
  spanContext(): { traceId: string };
}

/** OpenTelemetry's `Tracer`. */
export interface OtelTracer {
  startSpan(name: string, options?: { kind?: number; attributes?: OtelAttributes }, context?: OtelContext): OtelSpan;
}

/** OpenTelemetry's `ObservableResult`. */
export interface OtelObservableResult {
  observe(value: number, attributes?: OtelAttributes): void;
}

/** OpenTelemetry's observable instruments. */
export interface OtelObservable {
  addCallback(callback: (result: OtelObservableResult) => void): void;
  removeCallback(callback: (result: OtelObservableResult) => void): void;
}

/** OpenTelemetry's `MetricOptions`. */
export interface OtelMetricOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

/** OpenTelemetry's `Meter`, the instruments ebb makes. */
export interface OtelMeter {
  createCounter(
    name: string,
    options?: OtelMetricOptions,
  ): {
    add(value: number, attributes?: OtelAttributes): void;
  };
  createHistogram(
    name: string,
    options?: OtelMetricOptions,
  ): {
    record(value: number, attributes?: OtelAttributes): void;
  };
  createObservableGauge(name: string, options?: OtelMetricOptions): OtelObservable;
  createObservableUpDownCounter(name: string, options?: OtelMetricOptions): OtelObservable;
}

/**
 * The `@opentelemetry/api` module (1.x), as `import * as api from '@opentelemetry/api'` gives
 * it: ebb/otel reads the active context, the tracer and the meter through it.
 */
export interface OtelApi {
  readonly trace: {
    getTracer(name: string, version?: string): OtelTracer;
    setSpan(context: OtelContext, span: OtelSpan): OtelContext;
    getActiveSpan(): OtelSpan | undefined;
  };
  readonly context: {
    active(): OtelContext;
    with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
      context: OtelContext,
      fn: F,
      thisArg?: ThisParameterType<F>,
      ...args: A
    ): ReturnType<F>;
  };
  readonly metrics: { getMeter(name: string, version?: string): OtelMeter };
  createContextKey(description: string): symbol;
}
