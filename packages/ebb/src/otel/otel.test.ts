// otel()'s options and boundaries, with a recording stand-in for the OpenTelemetry API (the real
// SDK runs in test/otel): what it refuses at construction, that telemetry which throws never
// fails a call, and the amplification window on a virtual clock.
import { describe, expect, it } from 'vitest';
import { virtualClock } from '../core/virtual-clock.js';
import { pipeline } from '../retry/pipeline.js';
import { retrying } from '../retry/retrying.js';
import type { OtelApi, OtelAttributes, OtelContext, OtelObservableResult, OtelSpan } from './api.js';
import { otel } from './otel.js';

interface Fault {
  startSpan?: boolean;
  end?: boolean;
  add?: boolean;
}

/** An API whose context is one immutable map, whose spans and measurements are recorded. */
function fakeApi(fault: Fault = {}) {
  const ended: { name: string; attributes: OtelAttributes }[] = [];
  const added: { name: string; value: number; attributes?: OtelAttributes }[] = [];
  const callbacks = new Map<string, ((r: OtelObservableResult) => void)[]>();
  const makeContext = (values: Map<symbol, unknown>): OtelContext => ({
    getValue: (k) => values.get(k),
    setValue: (k, v) => makeContext(new Map(values).set(k, v)),
  });
  const SPAN = Symbol('span');
  const observable = (name: string) => ({
    addCallback: (cb: (r: OtelObservableResult) => void) => callbacks.set(name, [...(callbacks.get(name) ?? []), cb]),
    removeCallback: (cb: (r: OtelObservableResult) => void) =>
      callbacks.set(
        name,
        (callbacks.get(name) ?? []).filter((c) => c !== cb),
      ),
  });
  let active = makeContext(new Map());
  const api: OtelApi = {
    trace: {
      getTracer: () => ({
        startSpan(name, options) {
          if (fault.startSpan) throw new Error('tracer down');
          const attributes: OtelAttributes = { ...options?.attributes };
          const span: OtelSpan = {
            setAttribute: (k, v) => {
              attributes[k] = v;
            },
            addEvent: () => undefined,
            setStatus: () => undefined,
            recordException: () => undefined,
            end: () => {
              if (fault.end) throw new Error('exporter down');
              ended.push({ name, attributes });
            },
            isRecording: () => true,
            spanContext: () => ({ traceId: '0af7651916cd43dd8448eb211c80319c' }),
          };
          return span;
        },
      }),
      setSpan: (context, span) => context.setValue(SPAN, span),
      getActiveSpan: () => active.getValue(SPAN) as OtelSpan | undefined,
    },
    context: {
      active: () => active,
      with(context, fn, thisArg, ...args) {
        const before = active;
        active = context;
        try {
          return fn.apply(thisArg, args);
        } finally {
          active = before;
        }
      },
    },
    metrics: {
      getMeter: () => ({
        createCounter: (name) => ({
          add(value, attributes) {
            if (fault.add) throw new Error('meter down');
            added.push({ name, value, attributes });
          },
        }),
        createHistogram: (name) => ({
          record(value, attributes) {
            added.push({ name, value, attributes });
          },
        }),
        createObservableGauge: observable,
        createObservableUpDownCounter: observable,
      }),
    },
    createContextKey: (d) => Symbol(d),
  };
  /** What the gauge `name` observes now. */
  const read = (name: string) => {
    const seen: { value: number; attributes?: OtelAttributes }[] = [];
    for (const cb of callbacks.get(name) ?? [])
      cb({ observe: (value, attributes) => seen.push({ value, attributes }) });
    return seen;
  };
  return { api, ended, added, read };
}

describe('otel() refuses bad options at construction, naming the option and the fix', () => {
  it('without the API module', () => {
    expect(() => otel({} as never)).toThrow(
      "otel(): expected `api` to be the @opentelemetry/api module, got undefined. Pass `import * as api from '@opentelemetry/api'`.",
    );
    expect(() => otel({ api: { trace: {} } as never })).toThrow(/expected `api` to be the @opentelemetry\/api module/);
    // The module itself where the options go (otel(api)) is named, not read by its own keys.
    expect(() => otel(fakeApi().api as never)).toThrow(
      new TypeError('otel(): got the OpenTelemetry API where the options go. Pass otel({ api, name }).'),
    );
  });
  it('a name that is not a string, a window under 10 ms, an unknown option, a breaker without subscribe()', () => {
    const { api } = fakeApi();
    expect(() => otel({ api, name: 42 as never })).toThrow('otel(): expected `name` to be a string, got 42.');
    expect(() => otel({ api, windowMs: 5 })).toThrow(RangeError);
    expect(() => otel({ api, windowMs: Number.NaN })).toThrow(/`windowMs`/);
    expect(() => otel({ api, window: 1 } as never)).toThrow(/unknown option `window`/);
    expect(() => otel({ api, breaker: { state: 'closed' } as never })).toThrow(/`breaker`.*Pass circuitBreaker\(\)/);
    expect(() => otel({ api }).instrument({} as never)).toThrow(/`mechanisms\[0\]` to be a mechanism/);
  });
});

describe('telemetry that throws never fails a call', () => {
  for (const fault of [{ startSpan: true }, { end: true }, { add: true }] as Fault[]) {
    it(`a ${Object.keys(fault)[0]} that throws: the call still returns its value, and still fails with its own error`, async () => {
      const { api } = fakeApi(fault);
      const t = otel({ api, name: 'p' });
      const p = pipeline([t.instrument()]);
      await expect(p.execute(() => 'value')).resolves.toBe('value');
      const own = new Error('own');
      await expect(
        p.execute(() => {
          throw own;
        }),
      ).rejects.toBe(own);
    });
  }

  it('a clock that throws or reads NaN: durations stay finite, the call unaffected', async () => {
    const { api, added } = fakeApi();
    let n = 0;
    const clock = {
      now: () => {
        n++;
        if (n % 3 === 0) throw new Error('clock');
        return n % 3 === 1 ? Number.NaN : n;
      },
      sleep: () => Promise.resolve(),
    };
    const t = otel({ api, clock });
    await expect(pipeline([t.instrument()]).execute(() => 1)).resolves.toBe(1);
    const durations = added.filter((a) => a.name.endsWith('duration'));
    expect(durations.length).toBe(2);
    for (const d of durations) expect(Number.isFinite(d.value) && d.value >= 0).toBe(true);
  });

  it('a breaker whose state getter throws, a limit that reads NaN: those gauges observe nothing, the others still do', () => {
    const { api, read } = fakeApi();
    const breaker = {
      get state(): never {
        throw new Error('getter');
      },
      subscribe: () => () => undefined,
    };
    const limit = { limit: Number.NaN, inflight: 2, queued: 0 };
    otel({ api, breaker, limit });
    expect(read('ebb.circuit_breaker.state')).toEqual([]);
    expect(read('ebb.concurrency_limit.limit')).toEqual([]);
    expect(read('ebb.concurrency_limit.inflight')).toEqual([{ value: 2, attributes: {} }]);
  });
});

describe('the amplification window', () => {
  it('counts the calls and attempts of the last windowMs only (ten slices), and observes nothing when no call is in it', async () => {
    const { api, read } = fakeApi();
    const clock = virtualClock();
    const t = otel({ api, name: 'p', windowMs: 1_000, clock });
    const p = pipeline([t.instrument()]);
    expect(read('ebb.amplification')).toEqual([]);
    await p.execute(() => 1);
    await p.execute(() => 1);
    expect(read('ebb.amplification')).toEqual([{ value: 1, attributes: { 'ebb.pipeline.name': 'p' } }]);
    await clock.advance(1_100);
    expect(read('ebb.amplification')).toEqual([]);
  });

  it('close() removes the gauges and the breaker listener', () => {
    const { api, read } = fakeApi();
    let listeners = 0;
    const breaker = {
      state: 'closed' as const,
      subscribe: () => {
        listeners++;
        return () => {
          listeners--;
        };
      },
    };
    const t = otel({ api, breaker });
    expect(listeners).toBe(1);
    expect(read('ebb.circuit_breaker.state')).toHaveLength(4);
    t.close();
    t.close();
    expect(listeners).toBe(0);
    expect(read('ebb.circuit_breaker.state')).toEqual([]);
    expect(read('ebb.amplification')).toEqual([]);
  });

  it('instrument() runs the mechanisms it is given inside the call: each attempt of retrying() is one attempt span', async () => {
    const { api, ended } = fakeApi();
    const t = otel({ api, name: 'p' });
    let n = 0;
    const clock = virtualClock();
    const pending = pipeline([t.instrument(retrying({ clock }))]).execute(() => {
      n++;
      if (n < 2) throw new Error('once');
      return 'ok';
    });
    await clock.runAll();
    expect(await pending).toBe('ok');
    expect(ended.map((s) => [s.name, s.attributes['ebb.attempt.kind'] ?? s.attributes['ebb.call.attempts']])).toEqual([
      ['p attempt', 'original'],
      ['p attempt', 'retry'],
      ['p', 2],
    ]);
  });
});
