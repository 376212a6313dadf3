import { afterEach, describe, expect, it, vi } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { refQueue } from '../core/timer-queue.js';
import { virtualClock } from '../core/virtual-clock.js';
import { circuitBreaker } from '../resilience/circuit-breaker.js';
import { concurrencyLimit } from '../resilience/concurrency-limit.js';
import type { AttemptContext } from './contexts.js';
import { RetryError } from './errors.js';
import { fallback } from './fallback.js';
import { guard } from './guard.js';
import type { RateController } from './hook-points.js';
import type { Mechanism } from './mechanism.js';
import { pipeline } from './pipeline.js';
import { retrying } from './retrying.js';
import { timeout } from './timeout.js';

/** A mechanism that logs its name around the rest of the pipeline. */
const logging = (name: string, log: string[]): Mechanism => ({
  async execute(next, context) {
    log.push(`${name} in (attempt ${context.attempt})`);
    try {
      return await next(context);
    } finally {
      log.push(`${name} out`);
    }
  },
});

async function outcome<T>(p: Promise<T>, clock: { runAll(): Promise<void> }) {
  const settled = p.then(
    (value) => ({ value, error: undefined as unknown }),
    (error: unknown) => ({ value: undefined, error }),
  );
  await clock.runAll();
  return settled;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('pipeline(): composition', () => {
  it('runs mechanisms outer to inner in array order, each around the rest', async () => {
    const log: string[] = [];
    const call = pipeline([logging('a', log), logging('b', log), logging('c', log)], { name: 'prices' });
    expect(call.name).toBe('prices');
    expect(pipeline([]).name).toBeUndefined();
    expect(
      await call.execute((c) => {
        log.push(`operation (attempt ${c.attempt}, elapsed ${c.elapsedMs})`);
        return 42;
      }),
    ).toBe(42);
    expect(log).toEqual([
      'a in (attempt 1)',
      'b in (attempt 1)',
      'c in (attempt 1)',
      'operation (attempt 1, elapsed 0)',
      'c out',
      'b out',
      'a out',
    ]);
  });

  it('an empty pipeline calls the operation once; a throw becomes a rejection; a mechanism may return a plain value', async () => {
    expect(await pipeline([]).execute(() => 'v')).toBe('v');
    const boom = new Error('sync');
    await expect(
      pipeline([]).execute(() => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    const constantValue = { execute: () => 'short-circuit' } as unknown as Mechanism;
    expect(await pipeline([constantValue, logging('x', [])]).execute(() => 'never')).toBe('short-circuit');
    const throwing = {
      execute: () => {
        throw boom;
      },
    } as unknown as Mechanism;
    await expect(pipeline([throwing]).execute(() => 'never')).rejects.toBe(boom);
  });

  it('refuses what is not a mechanism, naming its place; bad options and calls are named too', async () => {
    expect(() => pipeline([retrying(), 5 as never])).toThrow(
      new TypeError('pipeline(): expected `mechanisms[1]` to be a mechanism { execute(next, context) }, got 5.'),
    );
    expect(() => pipeline([null as never])).toThrow(
      new TypeError('pipeline(): expected `mechanisms[0]` to be a mechanism { execute(next, context) }, got null.'),
    );
    expect(() => pipeline('retry' as never)).toThrow(
      'pipeline(): expected `mechanisms` to be an array of mechanisms, got "retry".',
    );
    expect(() => pipeline([], { name: 5 as never })).toThrow('pipeline(): expected `name` to be a string, got 5.');
    // The same mechanism in two places of one pipeline (a breaker so placed never closed again).
    const t = timeout(100);
    expect(() => pipeline([t, retrying(), t])).toThrow(
      new TypeError(
        'pipeline(): `mechanisms[2]` is `mechanisms[0]` again. A mechanism takes one place in a pipeline: make one for each place (circuitBreaker() twice).',
      ),
    );
    expect(() => pipeline([t, retrying()])).not.toThrow();
    // A mechanism's execute called by hand, as cockatiel's policy.execute(fn): no context.
    const said =
      'A mechanism’s execute(next, context) is called by a pipeline. Run one call through it with pipeline([mechanism]).execute(operation).';
    for (const m of [circuitBreaker(), concurrencyLimit(), timeout(100), retrying()]) {
      expect(() => (m.execute as (f: unknown) => unknown)(() => 1)).toThrow(new TypeError(said));
    }
    await expect(pipeline([]).execute(null as never)).rejects.toThrow(
      'pipeline.execute(): expected `operation` to be a function, got null.',
    );
    await expect(pipeline([]).execute(() => 1, { signal: {} as never })).rejects.toThrow(
      /pipeline.execute\(\): expected `signal` to be an AbortSignal, got an object\. Pass controller.signal\./,
    );
    // cockatiel's and Polly's shape, a signal where the options go, is named rather than ignored
    // (no abort would ever reach the call); so is an option of retry() or a typo.
    let started = 0;
    await expect(pipeline([]).execute(() => started++, new AbortController().signal as never)).rejects.toThrow(
      new TypeError(
        'pipeline.execute(): got an AbortSignal where the options go. Pass execute(operation, { signal }).',
      ),
    );
    await expect(pipeline([]).execute(() => started++, { signl: AbortSignal.abort() } as never)).rejects.toThrow(
      'pipeline.execute(): unknown option `signl`. Did you mean `signal`? Known options: signal.',
    );
    expect(started).toBe(0);
    const reason = new Error('already');
    let calls = 0;
    await expect(pipeline([]).execute(() => calls++, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(calls).toBe(0);
  });

  it('an abort rejects at once with its reason, whatever is inside, and aborts the running attempt', async () => {
    const deaf: Mechanism = { execute: (next, c) => new Promise((resolve) => void next(c).then(resolve)) };
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const p = pipeline([deaf]).execute(
      ({ signal }) => {
        seen = signal;
        return new Promise(() => {});
      },
      { signal: controller.signal },
    );
    controller.abort('stop');
    await expect(p).rejects.toBe('stop');
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe('stop');
  });
});

describe('retrying()', () => {
  it('takes the options of retry() but the signal, which each call brings', () => {
    expect(() => retrying({ signal: new AbortController().signal } as never)).toThrow(
      'retrying(): `signal` is per call: pass it to pipeline.execute(operation, { signal }).',
    );
    expect(() => retrying({ retryIf: () => true } as never)).toThrow('retrying(): `retryIf` moved; use `isFailure`.');
    expect(() => retrying({ onRetry: 1 as never })).toThrow('retrying(): expected `onRetry` to be a function, got 1.');
  });

  it('gives each attempt a context of its own, and the elapsed time on its clock', async () => {
    const clock = virtualClock(7_000);
    const seen: AttemptContext[] = [];
    const call = pipeline([retrying({ clock, backoff: constant({ delayMs: 40, maxAttempts: 3, jitter: noJitter }) })]);
    const r = await outcome(
      call.execute((c) => {
        seen.push(c);
        if (c.attempt < 3) throw new Error(`fail ${c.attempt}`);
        return 'third';
      }),
      clock,
    );
    expect(r.value).toBe('third');
    expect(seen.map((c) => [c.attempt, c.elapsedMs])).toEqual([
      [1, 0],
      [2, 40],
      [3, 80],
    ]);
    expect(new Set(seen).size).toBe(3);
  });

  it("a guard's refusal with retryAfterMs is backed off at least that long, then retried", async () => {
    const clock = virtualClock();
    let n = 0;
    const refusing: RateController = {
      acquire: () => {
        if (++n === 1) throw Object.assign(new Error('full'), { retryAfterMs: 500 });
        return 'ticket';
      },
      record: () => {},
    };
    const starts: number[] = [];
    const call = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }) }),
      guard(refusing),
    ]);
    const r = await outcome(
      call.execute(() => {
        starts.push(clock.now());
        return 'ok';
      }),
      clock,
    );
    expect(r.value).toBe('ok');
    expect(starts).toEqual([500]);
  });
});

describe('timeout()', () => {
  it('inside a retry: each attempt aborted on time with a TimeoutError, the call then retried', async () => {
    const clock = virtualClock();
    const call = pipeline([
      retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 2, jitter: noJitter }) }),
      timeout(100, { clock }),
    ]);
    const reasons: unknown[] = [];
    const r = await outcome(
      call.execute(({ signal }) => {
        signal.addEventListener('abort', () => reasons.push(signal.reason));
        return new Promise(() => {});
      }),
      clock,
    );
    expect(r.error).toBeInstanceOf(RetryError);
    expect(reasons).toHaveLength(2);
    expect(reasons[1]).toMatchObject({
      name: 'TimeoutError',
      message: 'attempt 2 timed out after 100 ms (timeout(100))',
    });
    expect((r.error as RetryError).cause).toBe(reasons[1]);
    expect(clock.pending).toBe(0);
  });

  it("outside a retry (the whole call's): its error names no attempt, whichever attempt was running", async () => {
    const clock = virtualClock();
    const call = pipeline([
      timeout(100, { clock }),
      retrying({ clock, backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }) }),
    ]);
    let attempts = 0;
    const r = await outcome(
      call.execute(() => {
        attempts++;
        return attempts < 3 ? Promise.reject(new Error('down')) : new Promise(() => {});
      }),
      clock,
    );
    expect(attempts).toBe(3);
    expect(r.error).toMatchObject({ name: 'TimeoutError', message: 'timed out after 100 ms (timeout(100))' });
    expect(clock.pending).toBe(0);
  });

  it('makes no AbortController unless the operation reads its signal', async () => {
    const Real = globalThis.AbortController;
    let made = 0;
    globalThis.AbortController = class extends Real {
      constructor() {
        super();
        made++;
      }
    };
    try {
      expect(await pipeline([retrying(), timeout(60_000)]).execute(() => 'unread')).toBe('unread');
      expect(made).toBe(0);
      expect(await pipeline([retrying(), timeout(60_000)]).execute(({ signal }) => signal.aborted)).toBe(false);
      expect(made).toBe(1);
    } finally {
      globalThis.AbortController = Real;
    }
  });

  it('waits in the process-wide timer queue by default, and leaves nothing there once the call settles', async () => {
    let during = -1;
    expect(
      await pipeline([timeout(60_000)]).execute(async () => {
        during = refQueue.size;
        return 'fast';
      }),
    ).toBe('fast');
    expect(during).toBe(1);
    expect(refQueue.size).toBe(0);
  });

  it('refuses a limit that is not a finite number > 0, and unknown options', () => {
    for (const bad of [0, -1, Number.NaN, Infinity]) expect(() => timeout(bad)).toThrow(RangeError);
    expect(() => timeout('5' as never)).toThrow(
      'timeout(): expected `ms` to be a finite number > 0, got "5". For example 5000 for five seconds.',
    );
    expect(() => timeout(5, { clock: {} as never })).toThrow(
      'timeout(): expected `clock` to be an object with now() and sleep(), got an object.',
    );
    expect(() => timeout(5, { clok: 1 } as never)).toThrow(/unknown option `clok`/);
  });
});

describe('fallback()', () => {
  it('replaces a failure with a value, or with what its function returns given the outcome and context', async () => {
    const down = () => Promise.reject(new Error('503'));
    expect(await pipeline([fallback('cached')]).execute(down)).toBe('cached');
    const seen: unknown[] = [];
    const computed = fallback((outcome, context) => {
      seen.push([outcome.ok, (outcome.error as Error).message, context.attempt]);
      return Promise.resolve('computed');
    });
    expect(await pipeline([computed]).execute(down)).toBe('computed');
    expect(seen).toEqual([[false, '503', 1]]);
    expect(await pipeline([fallback('unused')]).execute(() => 'fine')).toBe('fine');
  });

  it('by default neither a value nor a bug in the caller’s code is replaced; isFailure decides otherwise', async () => {
    const bug = new TypeError('undefined is not a function');
    await expect(pipeline([fallback('cached')]).execute(() => Promise.reject(bug))).rejects.toBe(bug);
    const judged = fallback('cached', {
      isFailure: (o) => (o.ok ? (o.value as unknown as { status: number }).status >= 500 : true),
    });
    expect(await pipeline([judged]).execute(() => ({ status: 503 }))).toBe('cached');
    expect(await pipeline([judged]).execute(() => ({ status: 200 }))).toEqual({ status: 200 });
    expect(await pipeline([judged]).execute(() => Promise.reject(bug))).toBe('cached');
    const asyncJudge = fallback('cached', { isFailure: async () => false });
    await expect(pipeline([asyncJudge]).execute(() => Promise.reject(bug))).rejects.toBe(bug);
  });

  it('never replaces an abort, and what its function throws is the error', async () => {
    const controller = new AbortController();
    const p = pipeline([fallback('cached', { isFailure: () => true })]).execute(() => new Promise(() => {}), {
      signal: controller.signal,
    });
    controller.abort('stop');
    await expect(p).rejects.toBe('stop');
    // Nor the abort of a context a mechanism outside it made (a context of its own, with a signal).
    const aborting: Mechanism = {
      execute: (next) => next({ attempt: 1, elapsedMs: 0, signal: AbortSignal.abort('inner stop') }),
    };
    await expect(
      pipeline([aborting, fallback('cached', { isFailure: () => true })]).execute(({ signal }) =>
        Promise.reject(signal.reason),
      ),
    ).rejects.toBe('inner stop');
    const broken = new Error('fallback broke');
    await expect(
      pipeline([
        fallback(() => {
          throw broken;
        }),
      ]).execute(() => Promise.reject(new Error('503'))),
    ).rejects.toBe(broken);
    expect(() => fallback(1, { isFailure: 1 as never })).toThrow(
      'fallback(): expected `isFailure` to be a function, got 1.',
    );
  });
});

describe('guards in a pipeline, wrapped by guard()', () => {
  it('a bare guard is refused with the fix, guard(x): the pipeline adapts nothing by itself', () => {
    const bare: RateController = { acquire: () => 't', record: () => {} };
    expect(() => pipeline([retrying(), bare as never])).toThrow(
      new TypeError(
        "pipeline(): expected `mechanisms[1]` to be a mechanism { execute(next, context) }, got an object. It is a guard { acquire(), record() }: wrap it, `guard(x)` (import { guard } from 'ebb').",
      ),
    );
    expect(() => pipeline([retrying(), guard(bare)])).not.toThrow();
  });

  it('guard() refuses what is not a guard, naming the value and what it must have', () => {
    expect(() => guard({ acquire: () => 't' } as never)).toThrow(
      new TypeError(
        'guard(): expected `guard` to be an object { acquire(signal, attempt), record(outcome, ticket, detail) }, got an object.',
      ),
    );
    expect(() => guard(undefined as never)).toThrow(TypeError);
    expect(() => guard({ record() {} } as never)).toThrow(/`guard`/);
  });

  it('acquire gets no signal when nothing can abort the call, and the context’s own when something can', async () => {
    const signals: unknown[] = [];
    const g = guard({
      acquire: (signal, attempt) => {
        signals.push([signal === undefined ? 'none' : signal.aborted, attempt]);
        return 't';
      },
      record: () => {},
    });
    await pipeline([g]).execute(() => 1);
    await pipeline([g]).execute(() => 1, { signal: new AbortController().signal });
    const clock = virtualClock();
    await pipeline([timeout(100, { clock }), g]).execute(() => 1);
    expect(signals).toEqual([
      ['none', 1],
      [false, 1],
      [false, 1],
    ]);
  });

  it("records 'throttled' for an error with throttled: true, 'failure' for any other, 'success' with the value", async () => {
    const log: unknown[] = [];
    const g = guard({ acquire: () => 't', record: (o, t, d) => void log.push([o, t, d]) });
    const throttle = Object.assign(new Error('429'), { throttled: true });
    const plain = new Error('500');
    await pipeline([g])
      .execute(() => Promise.reject(throttle))
      .catch(() => {});
    await pipeline([g])
      .execute(() => Promise.reject(plain))
      .catch(() => {});
    await pipeline([g]).execute(() => 'v');
    expect(log).toEqual([
      ['throttled', 't', throttle],
      ['failure', 't', plain],
      ['success', 't', 'v'],
    ]);
  });
});
