/**
 * ebb/otel — OpenTelemetry traces and metrics for a pipeline: a span per logical call with a
 * child per attempt (`http.request.resend_count`), span events for waits, refusals and breaker
 * state changes, metrics per mechanism, and the amplification gauge (attempts per logical call).
 * `@opentelemetry/api` is an optional peer that the program passes in: ebb imports nothing of it.
 *
 * @packageDocumentation
 */

export type {
  OtelApi,
  OtelAttributes,
  OtelContext,
  OtelMeter,
  OtelMetricOptions,
  OtelObservable,
  OtelObservableResult,
  OtelSpan,
  OtelTracer,
} from './api.js';
export { type Otel, type OtelOptions, otel } from './otel.js';
