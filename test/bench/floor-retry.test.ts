// The floor prototype that bench/figures/floor.mjs weighs (bench/floor/floor.mjs) must really be
// a retry executor, or its bytes say nothing: it retries, stops at maxAttempts with a RetryError,
// cuts a wait on abort, returns a value judged a failure when the retries end, honours stop(),
// and refuses a bad delay or a bad isFailure answer. Each case runs on the floor (an async loop),
// the floor with the run as one object (ASK_QUEUE), the floor with the success path (ASK_FAST),
// and every ask on with full messages, each built by esbuild as the figure builds it, in virtual
// time (vitest's fake timers).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
// @ts-expect-error: a plain ES module of the bench, without declarations
import { ASKS, buildFloor } from '../../bench/floor/asks.mjs';

// biome-ignore lint/suspicious/noExplicitAny: the prototype is plain JavaScript
type Floor = any;

const ALL: string[] = (ASKS as [string, string][]).map(([flag]) => flag);
const VARIANTS: [string, string[], boolean][] = [
  ['the floor (async loop, short messages)', [], false],
  ['the floor with the run as one object', ['QUEUE'], false],
  ['the floor with the success path', ['FAST'], false],
  ['every ask, full messages', ALL, true],
];

const dir = mkdtempSync(join(tmpdir(), 'ebb-floor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Builds the prototype with the asks `on` as the figure does (not minified, to read its errors)
 * and imports it; each test of the block runs in virtual time.
 */
function useFloor(file: string, on: string[], messages: boolean, loaded: (f: Floor) => void): void {
  beforeAll(async () => {
    const { code } = await buildFloor(on, { messages, minify: false });
    const path = join(dir, `${file.replace(/\W+/g, '-')}.mjs`);
    writeFileSync(path, code);
    loaded(await import(pathToFileURL(path).href));
  });
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
}

describe.each(VARIANTS)('%s', (name, on, messages) => {
  let f: Floor;
  useFloor(name, on, messages, (m) => {
    f = m;
  });

  it('retries a failing operation (a rejected promise) until it succeeds, waiting between attempts', async () => {
    let calls = 0;
    const result = f.retry(
      async () => {
        calls++;
        if (calls < 3) throw new Error(`attempt ${calls}`);
        return 'ok';
      },
      { backoff: f.exponential({ initialDelayMs: 1_000, jitter: f.noJitter }) },
    );
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toBe(1); // the first wait is 1 s: attempt 2 has not started
    await vi.advanceTimersByTimeAsync(1 + 2_000);
    await expect(result).resolves.toBe('ok');
    expect(calls).toBe(3);
  });

  it('gives up at maxAttempts with a RetryError carrying the attempts, the reason and the last error', async () => {
    const errors: Error[] = [];
    const result = f.retry(
      () => {
        errors.push(new Error(`attempt ${errors.length + 1}`));
        throw errors.at(-1);
      },
      { backoff: f.exponential({ initialDelayMs: 10, maxAttempts: 3 }) },
    );
    const settled = expect(result).rejects.toMatchObject({ name: 'RetryError', reason: 'attempts', attempts: 3 });
    await vi.runAllTimersAsync();
    await settled;
    const error = await result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(f.RetryError);
    expect(error.cause).toBe(errors[2]);
    expect(error[Symbol.for('ebb.error.code')]).toBe('EBB_RETRY_GAVE_UP');
    expect(errors).toHaveLength(3);
  });

  it('is finite and fully jittered by default: exponential() stops after 5 attempts, draws in [0, cap)', async () => {
    const run = f.exponential().start(() => 0.5);
    expect([run.next(), run.next(), run.next(), run.next(), run.next()]).toEqual([50, 100, 200, 400, -1]);
    let calls = 0;
    const result = f.retry(() => {
      calls++;
      throw new Error('down');
    });
    const settled = expect(result).rejects.toMatchObject({ attempts: 5 });
    await vi.runAllTimersAsync();
    await settled;
    expect(calls).toBe(5);
  });

  it('an abort cuts the wait at once: rejects with the reason, starts no attempt, leaves no timer', async () => {
    const controller = new AbortController();
    let calls = 0;
    const result = f.retry(
      () => {
        calls++;
        throw new Error('down');
      },
      { backoff: f.exponential({ initialDelayMs: 60_000, jitter: f.noJitter }), signal: controller.signal },
    );
    await vi.advanceTimersByTimeAsync(10);
    expect(vi.getTimerCount()).toBe(1); // waiting out the 60 s
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(result).rejects.toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls).toBe(1);
  });

  it('an abort while isFailure judges cuts the wait that would follow', async () => {
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    let calls = 0;
    const result = f.retry(
      () => {
        calls++;
        throw new Error('down');
      },
      {
        backoff: f.exponential({ initialDelayMs: 60_000, jitter: f.noJitter }),
        signal: controller.signal,
        isFailure: async () => {
          controller.abort(reason);
          return true;
        },
      },
    );
    const settled = expect(result).rejects.toBe(reason);
    await vi.advanceTimersByTimeAsync(10);
    await settled;
    expect(vi.getTimerCount()).toBe(0);
    expect(calls).toBe(1);
  });

  it('an already-aborted signal never calls the operation', async () => {
    const op = vi.fn(() => 'ok');
    const reason = new Error('before');
    await expect(f.retry(op, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(op).not.toHaveBeenCalled();
  });

  it('judges values: a 503 is retried, and the last one is returned as it is when the attempts end', async () => {
    const responses = [{ status: 503 }, { status: 503 }, { status: 503 }];
    let calls = 0;
    const result = f.retry(() => responses[calls++], {
      backoff: f.exponential({ initialDelayMs: 10, maxAttempts: 3 }),
      isFailure: (o: { ok: boolean; value?: { status: number } }) => o.ok && o.value?.status === 503,
    });
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe(responses[2]);
    expect(calls).toBe(3);
    // A value that is no failure ends the run at once.
    const ok = { status: 200 };
    await expect(f.retry(() => ok, { isFailure: (o: { ok: boolean }) => !o.ok })).resolves.toBe(ok);
  });

  it('stop(error) ends the run at once with the error itself, whatever isFailure says', async () => {
    const error = new Error('no such item');
    let calls = 0;
    const result = f.retry(
      () => {
        calls++;
        throw f.stop(error);
      },
      { isFailure: () => true },
    );
    await expect(result).rejects.toBe(error);
    expect(calls).toBe(1);
  });

  it("refuses a policy's bad delay and a bad isFailure answer, failing only that call", async () => {
    const nan = { maxElapsedMs: Infinity, start: () => ({ next: () => Number.NaN }) };
    await expect(f.retry(() => Promise.reject(new Error('x')), { backoff: nan })).rejects.toThrow(RangeError);
    const huge = { maxElapsedMs: Infinity, start: () => ({ next: () => Infinity }) };
    await expect(f.retry(() => Promise.reject(new Error('x')), { backoff: huge })).rejects.toThrow(RangeError);
    const text = { maxElapsedMs: Infinity, start: () => ({ next: () => '5' }) };
    await expect(f.retry(() => Promise.reject(new Error('x')), { backoff: text })).rejects.toThrow(TypeError);
    await expect(f.retry(() => 'v', { isFailure: () => 'yes' })).rejects.toThrow(TypeError);
    expect(vi.getTimerCount()).toBe(0);
    await expect(f.retry(() => 'fine')).resolves.toBe('fine');
  });

  it('refuses bad options with a message naming the option and the value', () => {
    expect(() => f.exponential({ initialDelayMs: -1 })).toThrow(/`initialDelayMs`.*-1/);
    expect(() => f.exponential({ maxAttempts: Number.NaN })).toThrow(RangeError);
    return expect(f.retry(() => 1, { backoff: 5 })).rejects.toThrow(/`backoff`.*5/);
  });
});

// The asks beyond the floor, each once, on the build with every ask and full messages: the bytes
// the figure gives them are bytes of a feature that works.
describe('every ask, what each adds', () => {
  let f: Floor;
  useFloor('asks', ALL, true, (m) => {
    f = m;
  });
  const failing = (make: () => unknown) => {
    const calls: number[] = [];
    const op = () => {
      calls.push(Date.now());
      throw make();
    };
    return { calls, op };
  };

  it('PRINTING: a policy prints as its schedule, in readable units, and as JSON', () => {
    const p = f.exponential();
    expect(String(p)).toBe('exponential 100 ms ×2, 20 s cap, full jitter, 5 attempts');
    expect(JSON.parse(JSON.stringify(p))).toEqual({
      type: 'exponential',
      initialDelayMs: 100,
      factor: 2,
      maxDelayMs: 20_000,
      maxAttempts: 5,
      maxElapsedMs: null, // Infinity in JSON
      jitter: 'full',
    });
  });

  it('UNKNOWN and MESSAGES: an unknown option is refused with where it goes', async () => {
    await expect(f.retry(() => 1, { maxAttempts: 3 })).rejects.toThrow(/maxAttempts.*exponential\(\{ maxAttempts \}\)/);
    expect(() => f.exponential({ retries: 2 })).toThrow(TypeError);
  });

  it('RULE: a bug in the caller is no failure (rejects at once); a failed fetch is retried', async () => {
    const bug = failing(() => new TypeError('x is not a function'));
    await expect(f.retry(bug.op)).rejects.toThrow('x is not a function');
    expect(bug.calls).toHaveLength(1);
    const down = failing(() => new TypeError('fetch failed'));
    const result = f.retry(down.op, { backoff: f.exponential({ maxAttempts: 2 }) });
    const settled = expect(result).rejects.toMatchObject({ reason: 'attempts', attempts: 2 });
    await vi.runAllTimersAsync();
    await settled;
  });

  it('HINTS: retryAfterMs lengthens the wait; one above maxRetryAfterMs gives up at once', async () => {
    const hinted = failing(() => Object.assign(new Error('429'), { retryAfterMs: 5_000 }));
    const result = f.retry(hinted.op, {
      backoff: f.exponential({ initialDelayMs: 10, maxAttempts: 2, jitter: f.noJitter }),
    });
    const settled = expect(result).rejects.toMatchObject({ reason: 'attempts' });
    await vi.runAllTimersAsync();
    await settled;
    expect((hinted.calls[1] ?? 0) - (hinted.calls[0] ?? 0)).toBe(5_000);
    const far = failing(() => Object.assign(new Error('503'), { retryAfterMs: 120_000 }));
    await expect(f.retry(far.op, { maxRetryAfterMs: 60_000 })).rejects.toMatchObject({
      reason: 'retry-after',
      attempts: 1,
    });
  });

  it("BUDGET: a refusal gives up with reason 'budget'; an answer that is no boolean is refused", async () => {
    const op = failing(() => new Error('down')).op;
    const refuse = { tryAcquireRetry: () => false, recordSuccess: () => {} };
    await expect(f.retry(op, { budget: refuse })).rejects.toMatchObject({ reason: 'budget', attempts: 1 });
    const odd = { tryAcquireRetry: () => 'yes', recordSuccess: () => {} };
    await expect(f.retry(op, { budget: odd })).rejects.toThrow(TypeError);
  });

  it('HOOKS: onFailedAttempt and onRetry per failure, then onSuccess, in order', async () => {
    const seen: string[] = [];
    let calls = 0;
    const result = f.retry(
      () => {
        if (++calls < 3) throw new Error('down');
        return 'ok';
      },
      {
        onFailedAttempt: (c: { attempt: number }) => {
          seen.push(`failed ${c.attempt}`);
        },
        onRetry: (c: { attempt: number; delayMs: number }) => {
          seen.push(`retry ${c.attempt}`);
        },
        onSuccess: (c: { attempt: number }) => {
          seen.push(`success ${c.attempt}`);
        },
      },
    );
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe('ok');
    expect(seen).toEqual(['failed 1', 'retry 1', 'failed 2', 'retry 2', 'success 3']);
  });

  it('CLOCK: a custom clock waits the run, a clock going back and a draw outside [0, 1) are refused', async () => {
    const slept: number[] = [];
    let t = 0;
    const clock = {
      now: () => t,
      sleep: (ms: number) => {
        slept.push(ms);
        t += ms;
        return Promise.resolve();
      },
    };
    const backoff = f.exponential({ initialDelayMs: 100, maxAttempts: 3 });
    const op = failing(() => new Error('down')).op;
    await expect(f.retry(op, { backoff, clock, random: () => 0.5 })).rejects.toMatchObject({ attempts: 3 });
    expect(slept).toEqual([50, 100]);
    await expect(f.retry(op, { backoff, clock, random: () => 2 })).rejects.toThrow(RangeError);
    let back = 1_000;
    const backwards = { now: () => (back -= 10), sleep: () => Promise.resolve() };
    await expect(f.retry(op, { backoff: f.exponential({ maxElapsedMs: 10_000 }), clock: backwards })).rejects.toThrow(
      /never decreases/,
    );
  });

  it('GUARD: a thrown value whose getters throw, or a revoked proxy, is an ordinary failure', async () => {
    const hostile = Object.defineProperties(new Error('hostile'), {
      name: {
        get() {
          throw new Error('name getter');
        },
      },
      retryAfterMs: {
        get() {
          throw new Error('hint getter');
        },
      },
    });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    for (const thrown of [hostile, proxy]) {
      const down = failing(() => thrown);
      const result = f.retry(down.op, { backoff: f.exponential({ initialDelayMs: 10, maxAttempts: 2 }) });
      const settled = expect(result).rejects.toMatchObject({ name: 'RetryError', attempts: 2 });
      await vi.runAllTimersAsync();
      await settled;
      expect((await result.catch((e: { cause: unknown }) => e)).cause).toBe(thrown);
    }
  });

  it('LAZY: a success reads no clock unless something reads the elapsed time', async () => {
    const now = vi.spyOn(performance, 'now');
    await expect(f.retry(() => 'v')).resolves.toBe('v');
    await expect(f.retry(() => 'v', { backoff: f.exponential() })).resolves.toBe('v');
    expect(now).not.toHaveBeenCalled();
    // A time budget needs the start: read before attempt 1.
    await expect(f.retry(() => 'v', { backoff: f.exponential({ maxElapsedMs: 10_000 }) })).resolves.toBe('v');
    expect(now).toHaveBeenCalled();
    now.mockRestore();
  });

  it('ELAPSED: the run gives up when the next wait would end past maxElapsedMs', async () => {
    const down = failing(() => new Error('down'));
    const backoff = f.exponential({ initialDelayMs: 1_000, maxElapsedMs: 1_500, jitter: f.noJitter });
    const result = f.retry(down.op, { backoff });
    const settled = expect(result).rejects.toMatchObject({ reason: 'elapsed', attempts: 2, elapsedMs: 1_000 });
    await vi.runAllTimersAsync();
    await settled;
  });
});
