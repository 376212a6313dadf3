// Success-path overhead of ebb/otel, in one process: `pipeline([retrying()])` around
// `() => Promise.resolve(1)` beside the same pipeline instrumented with `otel().instrument()` —
// with ebb/otel loaded and no OpenTelemetry SDK registered (the API's no-op tracer and meter:
// what a library that ships instrumented costs a program that does not collect), and, for
// scale, with the SDK registered (sdk-trace-base with a processor that drops every span,
// sdk-metrics with a reader never collected). Against the bare call and the floor. Every
// subject is measured in the same process in interleaved rounds (bench/lib/success-path.mjs).
//
// `node figures/otel-overhead.mjs [--quick]` prints one JSON object:
//   { node, loadAverage: [before, after], subjects: { id: { nsPerCall, overBareNs, timesFloor } } }
import * as api from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { pipeline, retrying } from 'ebb';
import { otel } from 'ebb/otel';
import { baseEntries, entryOf, fn, printMedians } from '../lib/success-path.mjs';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 5;
const MIN_CPU_TIME_NS = (quick ? 120 : 300) * 1e6;

// No SDK registered: api.trace and api.metrics answer with their no-op implementations.
const plain = pipeline([retrying()]);
const noSdk = pipeline([otel({ api, name: 'bench' }).instrument(retrying())]);

// An SDK, not registered globally: a tracer whose spans go nowhere, a meter whose reader is never read.
class NeverRead extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}
const tracer = new BasicTracerProvider().getTracer('ebb');
const meter = new MeterProvider({ readers: [new NeverRead()] }).getMeter('ebb');
const withSdk = pipeline([otel({ api, name: 'bench', tracer, meter }).instrument(retrying())]);

const entries = baseEntries();
entries.push(await entryOf('ebb pipeline([retrying()])', () => plain.execute(fn)));
entries.push(await entryOf('the same, otel().instrument(retrying()), no SDK registered', () => noSdk.execute(fn)));
entries.push(await entryOf('the same, with the SDK (spans sampled, metrics recorded)', () => withSdk.execute(fn)));

await printMedians(entries, ROUNDS, MIN_CPU_TIME_NS);
