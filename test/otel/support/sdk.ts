// The real OpenTelemetry SDK, in memory: a tracer provider whose spans land in an
// InMemorySpanExporter, a meter provider read on demand by a MetricReader, and the
// AsyncLocalStorage context manager a Node.js SDK setup registers.
import * as api from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  type MetricData,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** A reader that collects when asked: the SDK's own MetricReader, with no timer. */
class OnDemandReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export interface Sdk {
  readonly api: typeof api;
  readonly tracer: api.Tracer;
  readonly meter: api.Meter;
  /** Spans ended so far. */
  spans(): ReadableSpan[];
  /** Every metric of the meter `ebb`, by name. */
  metrics(): Promise<Map<string, MetricData>>;
  shutdown(): Promise<void>;
}

/** Registers the context manager and makes a tracer and a meter of fresh providers. */
export function startSdk(): Sdk {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(contextManager);
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    api,
    tracer: tracerProvider.getTracer('ebb'),
    meter: meterProvider.getMeter('ebb'),
    spans: () => exporter.getFinishedSpans(),
    async metrics() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw errors[0];
      const out = new Map<string, MetricData>();
      for (const scope of resourceMetrics.scopeMetrics) for (const m of scope.metrics) out.set(m.descriptor.name, m);
      return out;
    },
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      api.context.disable();
    },
  };
}

/** The data points of `metric` whose attributes include `attributes`. */
export function points<T = number>(
  metric: MetricData | undefined,
  attributes: Record<string, unknown> = {},
): DataPoint<T>[] {
  if (metric === undefined) throw new Error('metric not recorded');
  return (metric.dataPoints as DataPoint<T>[]).filter((p) =>
    Object.entries(attributes).every(([k, v]) => p.attributes[k] === v),
  );
}

/** The one value of a counter or gauge for `attributes` (summed over the matching points). */
export function value(metric: MetricData | undefined, attributes: Record<string, unknown> = {}): number {
  return points<number>(metric, attributes).reduce((s, p) => s + p.value, 0);
}

/** The one histogram point for `attributes`. */
export function histogram(metric: MetricData | undefined, attributes: Record<string, unknown> = {}): Histogram {
  const ps = points<Histogram>(metric, attributes);
  if (ps.length !== 1) throw new Error(`expected one histogram point, got ${ps.length}`);
  return (ps[0] as DataPoint<Histogram>).value;
}
