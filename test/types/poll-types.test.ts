// poll() infers the value of the `done: true` branch: `{ done: false }` adds no `undefined` to it.
// These are compile-time checks (`npm run typecheck` type-checks test/ with `strict`); the test
// also runs the examples, so a check that type-checks but misbehaves fails too.
import { type AttemptContext, type PollResult, poll, presets, virtualClock } from 'ebb';
import { describe, expect, expectTypeOf, it } from 'vitest';

interface Status {
  readonly state: 'SUCCEEDED' | 'RUNNING';
  readonly output: string;
}

describe('poll() infers its value', () => {
  it("its own JSDoc example compiles under strict, and the value is the check's `done: true` value", async () => {
    const clock = virtualClock();
    const states: Status['state'][] = ['RUNNING', 'SUCCEEDED'];
    const getStatus = async (_id: string): Promise<Status> => ({
      state: states.shift() ?? 'SUCCEEDED',
      output: 'report.csv',
    });
    const id = 'job-1';
    // The example of poll()'s doc comment, with a clock for the test:
    const pending = poll(
      async () => {
        const s = await getStatus(id);
        return s.state === 'SUCCEEDED' ? { done: true, value: s } : { done: false };
      },
      { backoff: presets.awsPolling, initialDelayMs: 100, clock },
    );
    await clock.runAll();
    const job = await pending;
    expectTypeOf(job).toEqualTypeOf<Status>();
    expect(job.output).toBe('report.csv');
  });

  it('a synchronous check, an annotated one, one that is never done, and the options typed by the value', async () => {
    expectTypeOf(poll(() => ({ done: true, value: 5 }))).toEqualTypeOf<Promise<number>>();
    expectTypeOf(poll((): PollResult<string> => ({ done: false }))).toEqualTypeOf<Promise<string>>();
    expectTypeOf(poll(() => ({ done: false }) as const)).toEqualTypeOf<Promise<never>>();
    const checked = (c: AttemptContext) =>
      c.attempt > 1 ? { done: true as const, value: 'ready' } : { done: false as const };
    const clock = virtualClock();
    const seen: string[] = [];
    const p = poll(checked, { clock, onSuccess: ({ value }) => void seen.push(value) });
    await clock.runAll();
    expect(await p).toBe('ready');
    expect(seen).toEqual(['ready']);
  });
});
