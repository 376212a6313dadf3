import type { StateChange } from '../resilience/breaker-types.js';
import { prop } from '../retry/errors.js';
import type { OtelApi, OtelAttributes, OtelMeter, OtelObservable, OtelObservableResult } from './api.js';
import { ATTR, EVENTS, INSTRUMENTS, STATES } from './names.js';
import type { OtelOptions } from './otel.js';

/** A number read from user state for a gauge: undefined unless finite (a throwing getter included). */
function finite(read: () => unknown): number | undefined {
  try {
    const v = read();
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The gauges of {@link otel}: the amplification (`amplification` observes it), and the state of
 * the breaker, limit, rate controller and budget it was given — each callback reads its object
 * when the SDK collects, and skips a value that is not a finite number or a getter that throws.
 * The breaker's changes are counted and added, as an event, to the span active when it changed.
 * Returns what stops it all (idempotent).
 * @internal
 */
export function observeState(
  meter: OtelMeter,
  api: OtelApi,
  base: OtelAttributes,
  o: Pick<OtelOptions, 'breaker' | 'limit' | 'rate' | 'budget'>,
  amplification: (r: OtelObservableResult) => void,
): () => void {
  const I = INSTRUMENTS;
  const observers: [OtelObservable, (r: OtelObservableResult) => void][] = [];
  const observe = (
    make: 'createObservableGauge' | 'createObservableUpDownCounter',
    spec: { name: string; unit: string; description: string },
    callback: (r: OtelObservableResult) => void,
  ) => {
    const instrument = meter[make](spec.name, spec);
    instrument.addCallback(callback);
    observers.push([instrument, callback]);
  };
  const gauge = (spec: (typeof I)[keyof typeof I], read: () => unknown, updown = false) =>
    observe(updown ? 'createObservableUpDownCounter' : 'createObservableGauge', spec, (r) => {
      const v = finite(read);
      if (v !== undefined) r.observe(v, base);
    });
  observe('createObservableGauge', I.amplification, amplification);
  const { breaker, limit, rate, budget } = o;
  let unsubscribe: (() => void) | undefined;
  if (breaker) {
    const transitions = meter.createCounter(I.breakerTransitions.name, I.breakerTransitions);
    observe('createObservableGauge', I.breakerState, (r) => {
      let state: unknown;
      try {
        state = breaker.state;
      } catch {
        return;
      }
      for (const s of STATES) r.observe(s === state ? 1 : 0, { ...base, [ATTR.state]: s });
    });
    unsubscribe = breaker.subscribe((change: StateChange) => {
      try {
        transitions.add(1, { ...base, [ATTR.state]: change.to });
        api.trace.getActiveSpan()?.addEvent(EVENTS.stateChange, {
          [ATTR.from]: change.from,
          [ATTR.state]: change.to,
          [ATTR.changeReason]: change.reason,
        });
      } catch {
        // Telemetry never fails the call that changed the state.
      }
    });
  }
  if (limit) {
    gauge(I.limit, () => limit.limit);
    gauge(I.inflight, () => limit.inflight, true);
    gauge(I.queued, () => limit.queued, true);
  }
  if (rate) gauge(I.rate, () => rate.ratePerSecond);
  if (budget) gauge(I.budget, () => prop(budget, 'tokens') ?? prop(budget, 'balance') ?? prop(budget, 'available'));

  let closed = false;
  return () => {
    if (closed) return;
    closed = true;
    for (const [instrument, callback] of observers) {
      try {
        instrument.removeCallback(callback);
      } catch {
        // An SDK already shut down: nothing left to remove from.
      }
    }
    unsubscribe?.();
  };
}
