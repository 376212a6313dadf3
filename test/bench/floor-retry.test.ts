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

describe.each(VARIANTS)('%s', (name, on, messages) => {
  let f: Floor;
  beforeAll(async () => {
    const { code } = await buildFloor(on, { messages, minify: false });
    const file = join(dir, `${name.replace(/\W+/g, '-')}.mjs`);
    writeFileSync(file, code);
    f = await import(pathToFileURL(file).href);
  });
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
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
