// A shared mechanism's `clock` that breaks — throws, reads NaN, goes back, or cannot sleep — while
// its calls and its own background timers (lease renewal, batching, reports) run against a real
// redis-server: every call is still served, nothing reaches the host (an unhandled rejection
// fails the test: test/setup/unhandled.ts), and the mechanism is still in shared mode, in touch
// with Redis, once the clock works again. The readings are repaired where the clock enters
// (packages/ebb/src/redis/repaired-clock.ts): time stands still while the clock is broken.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../packages/ebb/src/core/clock.js';
import {
  sharedAdaptiveThrottle,
  sharedCircuitBreaker,
  sharedRate,
  sharedRatioBudget,
  sharedTokenBudget,
} from '../../packages/ebb/src/redis/index.js';
import { pipeline } from '../../packages/ebb/src/retry/pipeline.js';
import { haveRedis, type RedisServer, startRedis } from './support/redis-server.js';

const enabled = haveRedis();
let server: RedisServer;
let client: Redis;

type Fault = 'throws' | 'NaN' | 'backwards' | 'sleep throws';
const FAULTS: readonly Fault[] = ['throws', 'NaN', 'backwards', 'sleep throws'];

/** The system's time and timers, broken as `fault` says while `broken` is set. */
function breakable(fault: Fault) {
  const state = { broken: false };
  const clock: Clock = {
    now: () => {
      if (state.broken && fault === 'throws') throw new Error('clock broke');
      if (state.broken && fault === 'NaN') return Number.NaN;
      return performance.now() - (state.broken && fault === 'backwards' ? 1e9 : 0);
    },
    sleep: (ms, signal) => {
      if (state.broken && fault === 'sleep throws') throw new Error('sleep broke');
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const t = setTimeout(resolve, ms);
        signal?.addEventListener('abort', () => {
          clearTimeout(t);
          reject(signal.reason);
        });
      });
    },
  };
  return { clock, state };
}

type Subject = {
  /** One call through the mechanism: what it ended with. */
  call(): Promise<string>;
  readonly mode: string;
  close(): Promise<void>;
  ready?(): Promise<void>;
};

const served = (p: PromiseLike<unknown>): Promise<string> =>
  Promise.resolve(p).then(
    (v) => String(v),
    (e: unknown) => `rejected: ${(e as Error)?.message}`,
  );

/** A mechanism of a pipeline: a call is one `execute` through it. */
const piped = (
  m: Parameters<typeof pipeline>[0][number] & { readonly mode: string; close(): Promise<void> },
): Subject => {
  const p = pipeline([m]);
  return {
    call: () => served(p.execute(() => 'served')),
    get mode() {
      return m.mode;
    },
    close: () => m.close(),
  };
};

/** A budget: a call records an outcome and asks for a retry. */
const budgeted = (
  m: {
    readonly mode: string;
    tryAcquireRetry(error?: unknown): boolean;
    close(): Promise<void>;
    ready(): Promise<void>;
  },
  record: () => void,
): Subject => ({
  call: () => {
    record();
    return served(Promise.resolve(m.tryAcquireRetry()));
  },
  get mode() {
    return m.mode;
  },
  close: () => m.close(),
  ready: () => m.ready(),
});

const SUBJECTS: Record<string, (name: string, clock: Clock) => Subject> = {
  sharedRate: (name, clock) => piped(sharedRate({ client, name, clock, leaseMs: 20, initialRatePerSecond: 1_000 })),
  sharedCircuitBreaker: (name, clock) => piped(sharedCircuitBreaker({ client, name, clock, reportMs: 20 })),
  sharedAdaptiveThrottle: (name, clock) => piped(sharedAdaptiveThrottle({ client, name, clock, syncIntervalMs: 20 })),
  sharedRatioBudget: (name, clock) => {
    const m = sharedRatioBudget({ client, name, clock, syncIntervalMs: 20 });
    return budgeted(m, () => {
      m.recordRequest?.();
      m.recordFailure?.(new Error('503'));
    });
  },
  sharedTokenBudget: (name, clock) => {
    const m = sharedTokenBudget({ client, name, clock, syncIntervalMs: 20 });
    return budgeted(m, () => m.recordSuccess({ attempt: 2, lastError: new Error('503') }));
  },
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!enabled)('a shared mechanism whose clock breaks, on a real redis-server', () => {
  beforeAll(async () => {
    server = await startRedis();
    client = new Redis(server.url, { maxRetriesPerRequest: 0 });
    await new Promise((r) => client.once('ready', r));
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });

  for (const [mechanism, make] of Object.entries(SUBJECTS)) {
    for (const fault of FAULTS) {
      it(`${mechanism}, clock ${fault} for 200 ms: no call left waiting, nothing reaches the host, served and shared again after`, async () => {
        const { clock, state } = breakable(fault);
        const subject = make(`clock-${mechanism}-${fault.replace(' ', '-')}`, clock);
        await subject.ready?.();
        const ended: string[] = [];
        try {
          // 12 calls 25 ms apart; the clock broken from the 3rd to the 10th (about 8 background ticks).
          for (let i = 0; i < 12; i++) {
            state.broken = i >= 2 && i < 10;
            const outcome = subject.call();
            ended.push(await Promise.race([outcome, sleep(2_000).then(() => 'still pending after 2 s')]));
            await sleep(25);
          }
          state.broken = false;
          await sleep(150);
          const ok = mechanism.endsWith('Budget') ? /^(true|false)$/ : /^served$/;
          // Before and after the fault every call is served; during it, a call is served (the
          // reading repaired) or — where callers wait on time, the rate's gate — fails at once
          // with the clock's own error or one naming it. None is left waiting.
          expect(ended.filter((_, i) => i < 2 || i >= 10)).toEqual(Array(4).fill(expect.stringMatching(ok)));
          for (const e of ended.slice(2, 10))
            expect(e).toMatch(new RegExp(`${ok.source}|^rejected: (clock broke|clock\\.now\\(\\) returned)`));
          expect(subject.mode).toBe('shared');
        } finally {
          state.broken = false;
          await subject.close();
        }
      });
    }
  }
});
