import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { withRetry } from './with-retry.js';

const twice = constant({ delayMs: 0, maxAttempts: 2 });

describe('withRetry: what user code hands it is checked where it enters', () => {
  it('a fetchImpl that returns no promise fails the call with a TypeError naming it', async () => {
    for (const returned of [undefined, 'ok', Number.NaN]) {
      const f = withRetry((() => returned) as unknown as typeof fetch, { backoff: twice });
      await expect(f('http://127.0.0.1/x')).rejects.toThrow(
        /^withRetry\(\): `fetchImpl` returned .*; expected a promise of a Response\.$/,
      );
    }
  });

  it("a hint reader that throws — the predicate's or withRetry's own — reaches the caller unchanged, as a predicate's own throw does, and the response is not retried", async () => {
    const bug = new Error('hint bug');
    const throwing = () => {
      throw bug;
    };
    for (const options of [
      { isFailure: Object.assign(() => true, { serverHintMs: throwing }) },
      { serverHintMs: throwing },
    ]) {
      let calls = 0;
      const f = withRetry(
        async (_input: string) => {
          calls++;
          return new Response('busy', { status: 503 });
        },
        { ...options, backoff: twice },
      );
      await expect(f('http://127.0.0.1/x')).rejects.toBe(bug);
      expect(calls).toBe(1);
    }
  });

  it('the predicate is asked about a POST response too; an answer that is not one fails the call naming isFailure', async () => {
    const f = withRetry(async (_input: string, _init?: RequestInit) => new Response('x', { status: 503 }), {
      isFailure: (() => 'maybe') as never,
      backoff: twice,
    });
    await expect(f('http://127.0.0.1/x', { method: 'POST', body: 'b' })).rejects.toThrow(
      /`isFailure` returned "maybe"/,
    );
  });
});
