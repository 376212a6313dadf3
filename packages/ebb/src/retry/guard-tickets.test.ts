import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { guard } from './guard.js';
import type { AttemptContext, Outcome, RateController, RetryOptions } from './options.js';
import { pipeline } from './pipeline.js';
import { retrying } from './retrying.js';
import { timeout } from './timeout.js';

/**
 * Every ticket a guard's `acquire` hands out ends in exactly one `record` or `release`: a
 * concurrency limit or a breaker's half-open probe holds a slot per ticket, and one lost ticket
 * is a slot lost for good. The guard sits inside a retry: `pipeline([retrying(options), guard(rate)])`.
 */
function ledger(acquire?: (n: number, signal?: AbortSignal) => unknown) {
  const log: string[] = [];
  const attempts: (number | undefined)[] = [];
  let n = 0;
  const open = new Set<string>();
  const rate: Required<RateController> = {
    acquire(signal, attempt) {
      attempts.push(attempt);
      const t = `t${++n}`;
      open.add(t);
      return acquire ? (acquire(n, signal) ?? t) : t;
    },
    record(outcome: Outcome, ticket?: unknown, error?: unknown) {
      log.push(`${outcome} ${String(ticket)}${error instanceof Error ? ` ${error.message}` : ''}`);
      if (!open.delete(ticket as string)) log.push(`UNKNOWN ${String(ticket)}`);
    },
    release(ticket?: unknown) {
      log.push(`release ${String(ticket)}`);
      if (!open.delete(ticket as string)) log.push(`UNKNOWN ${String(ticket)}`);
    },
  };
  return { rate, log, open, attempts };
}

const settled = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

/** `operation` through `pipeline([retrying(options), guard(rate)])`, with an attempt timeout inside when given. */
function guarded<T>(
  operation: (c: AttemptContext) => T | PromiseLike<T>,
  { rate, signal, attemptTimeoutMs, ...options }: RetryOptions & { rate: RateController; attemptTimeoutMs?: number },
) {
  const inner = attemptTimeoutMs ? [timeout(attemptTimeoutMs, { clock: options.clock })] : [];
  return pipeline([retrying(options), guard(rate), ...inner]).execute(operation, { signal });
}

describe('a guard inside retrying(): every ticket ends in record or release', () => {
  it('passes the attempt number to acquire and the error to record', async () => {
    const clock = virtualClock();
    const { rate, log, open, attempts } = ledger();
    const done = settled(
      guarded(
        (c) => {
          if (c.attempt < 3) throw new Error(`e${c.attempt}`);
          return 'ok';
        },
        { rate, clock, backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }) },
      ),
    );
    await clock.runAll();
    expect(await done).toEqual({ value: 'ok' });
    expect(attempts).toEqual([1, 2, 3]);
    expect(log).toEqual(['failure t1 e1', 'failure t2 e2', 'success t3']);
    expect(open.size).toBe(0);
  });

  it('releases the running attempt’s ticket when the caller aborts during it', async () => {
    const clock = virtualClock();
    const { rate, log, open } = ledger();
    const controller = new AbortController();
    let late: (v: string) => void = () => {};
    const done = settled(
      guarded(() => new Promise<string>((resolve) => (late = resolve)), {
        rate,
        clock,
        signal: controller.signal,
        backoff: constant({ delayMs: 10, maxAttempts: 5, jitter: noJitter }),
      }),
    );
    await clock.advance(5);
    controller.abort(new Error('stop'));
    late('too late');
    await clock.runAll();
    expect(await done).toMatchObject({ error: { message: 'stop' } });
    expect(log).toEqual(['release t1']);
    expect(open.size).toBe(0);
  });

  it('releases a ticket that arrives after the operation ended (acquire ignored the abort)', async () => {
    const clock = virtualClock();
    let grant: (t: string) => void = () => {};
    const { rate, log, open } = ledger(
      (n) =>
        new Promise<string>((resolve) => {
          grant = () => resolve(`t${n}`);
        }),
    );
    const controller = new AbortController();
    const done = settled(guarded(() => 'ok', { rate, clock, signal: controller.signal }));
    await clock.advance(1);
    controller.abort(new Error('stop'));
    grant('');
    await clock.runAll();
    expect(await done).toMatchObject({ error: { message: 'stop' } });
    expect(log).toEqual(['release t1']);
    expect(open.size).toBe(0);
  });

  it("a guard's wait is part of the attempt: a ticket granted past the deadline runs its attempt, recorded; none follows", async () => {
    const clock = virtualClock();
    const { rate, log, open } = ledger((n) => (n === 2 ? clock.sleep(1_000).then(() => `t${n}`) : undefined));
    const done = settled(
      guarded(
        () => {
          throw new Error('down');
        },
        { rate, clock, backoff: constant({ delayMs: 10, maxAttempts: 5, maxElapsedMs: 100, jitter: noJitter }) },
      ),
    );
    await clock.runAll();
    expect(await done).toMatchObject({ error: { name: 'RetryError', reason: 'elapsed', attempts: 2 } });
    expect(log).toEqual(['failure t1 down', 'failure t2 down']);
    expect(open.size).toBe(0);
  });

  it('records a timed-out attempt once, and ignores its late outcome', async () => {
    const clock = virtualClock();
    const { rate, log, open } = ledger();
    const done = settled(
      guarded((c) => (c.attempt === 1 ? clock.sleep(500).then(() => 'late') : 'ok'), {
        rate,
        clock,
        attemptTimeoutMs: 100,
        backoff: constant({ delayMs: 10, maxAttempts: 3, jitter: noJitter }),
      }),
    );
    await clock.runAll();
    expect(await done).toEqual({ value: 'ok' });
    expect(log).toEqual([expect.stringMatching(/^failure t1 /), 'success t2']);
    expect(open.size).toBe(0);
  });

  it('records the outcome before a throwing hook ends the operation', async () => {
    const clock = virtualClock();
    const { rate, log, open } = ledger();
    const done = settled(
      guarded(() => 'ok', {
        rate,
        clock,
        onSuccess: () => {
          throw new Error('hook');
        },
      }),
    );
    await clock.runAll();
    expect(await done).toMatchObject({ error: { message: 'hook' } });
    expect(log).toEqual(['success t1']);
    expect(open.size).toBe(0);
  });
});
