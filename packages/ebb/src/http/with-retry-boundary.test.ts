import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import type { HttpClassifier } from './classifier.js';
import { withRetry } from './with-retry.js';

const twice = constant({ delayMs: 0, maxAttempts: 2 });

describe('withRetry: what user code hands it is checked where it enters', () => {
  it('a fetchImpl that returns no promise fails the call with a TypeError naming it', async () => {
    for (const returned of [undefined, 'ok', Number.NaN]) {
      const f = withRetry((() => returned) as never, { backoff: twice });
      await expect(f('http://127.0.0.1/x')).rejects.toThrow(
        /^withRetry\(\): `fetchImpl` returned .*; expected a promise of a Response\.$/,
      );
    }
  });

  it("a classifier's serverHintMs that throws reaches the caller unchanged, as a classifier's own throw does, and the response is not retried", async () => {
    const bug = new Error('hint bug');
    let calls = 0;
    const retryOn = Object.assign((() => 'retry') as HttpClassifier, {
      serverHintMs: () => {
        throw bug;
      },
    });
    const f = withRetry(
      async () => {
        calls++;
        return new Response('busy', { status: 503 });
      },
      { retryOn, backoff: twice },
    );
    await expect(f('http://127.0.0.1/x')).rejects.toBe(bug);
    expect(calls).toBe(1);
  });

  it('the classifier is asked about a POST response too; a verdict that is not one fails the call naming retryOn', async () => {
    const f = withRetry(async () => new Response('x', { status: 503 }), {
      retryOn: (() => 'maybe') as unknown as HttpClassifier,
      backoff: twice,
    });
    await expect(f('http://127.0.0.1/x', { method: 'POST', body: 'b' })).rejects.toThrow(/`retryOn` returned "maybe"/);
  });
});
