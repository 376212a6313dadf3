import { describe, expect, it } from 'vitest';
import { constant } from '../backoff/constant.js';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import { virtualClock } from '../core/virtual-clock.js';
import { pipeline } from '../retry/pipeline.js';
import { type CircuitBreakerOptions, circuitBreaker, type StateChange } from './circuit-breaker.js';
import { BrokenCircuitError } from './errors.js';

/** 1 s, 2 s, 4 s, 8 s, … with no jitter: open periods exact. */
const doubling = exponential({ initialDelayMs: 1_000, maxDelayMs: 8_000, jitter: noJitter, maxAttempts: Infinity });
const hang = () => new Promise<never>(() => {});

function setup(options: CircuitBreakerOptions = {}) {
  const clock = virtualClock(1_000);
  const changes: string[] = [];
  const breaker = circuitBreaker({
    clock,
    consecutiveFailures: 1,
    openBackoff: doubling,
    onStateChange: (c: StateChange) => changes.push(`${c.from}>${c.to} ${c.reason} @${c.at}`),
    ...options,
  });
  const open = () => breaker.record('failure', breaker.acquire(), new Error('down'));
  return { clock, breaker, changes, open };
}

describe('circuitBreaker: a half-open probe is bounded in time', () => {
  it('a probe that hangs past the open period before it (the default) counts as failed: the breaker reopens for the next period', async () => {
    const { clock, breaker, changes, open } = setup();
    open(); // open for 1 s
    await clock.advance(1_000);
    const probe = breaker.acquire(); // half-open, the probe never reports
    expect(breaker.metrics.probesInFlight).toBe(1);
    await clock.advance(999);
    expect(() => breaker.acquire()).toThrow(BrokenCircuitError);
    expect(breaker.state).toBe('half-open');
    await clock.advance(2);
    // 1 s after the probe started it timed out: open since then, for the next step (2 s).
    expect(breaker.state).toBe('open');
    expect(breaker.retryAfterMs).toBe(2_000 - 1);
    expect(breaker.metrics.probesInFlight).toBe(0);
    expect(changes).toEqual([
      'closed>open consecutive-failures @1000',
      'open>half-open open-period-over @2000',
      'half-open>open probe-timeout @3000',
    ]);
    // Its late outcome is ignored.
    breaker.record('success', probe);
    expect(breaker.state).toBe('open');
    await clock.advance(2_000);
    const next = breaker.acquire();
    breaker.record('success', next);
    expect(breaker.state).toBe('closed');
  });

  it('probeTimeoutMs sets the bound; the open period that follows is the backoff’s next step', async () => {
    const { clock, breaker, changes, open } = setup({ probeTimeoutMs: 300 });
    open();
    await clock.advance(1_000);
    breaker.acquire();
    await clock.advance(300);
    expect(breaker.state).toBe('half-open'); // not past 300 ms yet
    await clock.advance(1);
    expect(breaker.state).toBe('open');
    expect(changes.at(-1)).toBe('half-open>open probe-timeout @2300');
    expect(breaker.retryAfterMs).toBe(2_300 + 2_000 - 2_301);
  });

  it('the timeout is applied as of the moment it passed, however late the breaker is next used', async () => {
    const { clock, breaker, changes, open } = setup({ probeTimeoutMs: 500 });
    open();
    await clock.advance(1_000);
    breaker.acquire();
    await clock.advance(10_000); // 2.5 s after the timeout the reopened period (2 s) is over too
    const probe = breaker.acquire();
    expect(changes.slice(-2)).toEqual(['half-open>open probe-timeout @2500', 'open>half-open open-period-over @12000']);
    breaker.record('success', probe);
    expect(breaker.state).toBe('closed');
  });

  it('with several probes, the oldest one’s timeout reopens; probes that report in time count as usual', async () => {
    const { clock, breaker, open } = setup({ maxHalfOpenProbes: 2, successesToClose: 2, probeTimeoutMs: 100 });
    open();
    await clock.advance(1_000);
    const a = breaker.acquire();
    await clock.advance(50);
    const b = breaker.acquire();
    breaker.record('success', b);
    expect(breaker.state).toBe('half-open');
    await clock.advance(51);
    expect(breaker.state).toBe('open');
    breaker.record('success', a);
    expect(breaker.state).toBe('open');
  });

  it('Infinity waits for the probe however long it takes', async () => {
    const { clock, breaker, open } = setup({ probeTimeoutMs: Infinity });
    open();
    await clock.advance(1_000);
    const probe = breaker.acquire();
    await clock.advance(1e9);
    expect(breaker.state).toBe('half-open');
    breaker.record('success', probe);
    expect(breaker.state).toBe('closed');
  });

  it('in a pipeline: an operation that never settles holds the probe; the next call after the timeout finds the circuit reopened, not stuck', async () => {
    const { clock, breaker, open } = setup();
    open();
    await clock.advance(1_000);
    const controller = new AbortController();
    const stuck = pipeline([breaker])
      .execute(hang, { signal: controller.signal })
      .catch((e: unknown) => e);
    await clock.advance(500);
    const refused = await pipeline([breaker])
      .execute(() => 'x')
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ state: 'half-open' });
    await clock.advance(501);
    const reopened = await pipeline([breaker])
      .execute(() => 'x')
      .catch((e: unknown) => e);
    expect(reopened).toMatchObject({ state: 'open' });
    expect((reopened as BrokenCircuitError).retryAfterMs).toBeGreaterThan(0);
    await clock.advance(2_000);
    await expect(pipeline([breaker]).execute(() => 'back')).resolves.toBe('back');
    expect(breaker.state).toBe('closed');
    controller.abort(new Error('gave up'));
    expect(await stuck).toMatchObject({ message: 'gave up' });
    expect(clock.pending).toBe(0);
  });

  it('an open period of 0 (a policy that probes at once) times a probe out as soon as time passes', async () => {
    const { clock, breaker, changes } = setup({ openBackoff: constant({ delayMs: 0 }) });
    breaker.record('failure', breaker.acquire(), new Error('down'));
    breaker.acquire();
    await clock.advance(1);
    expect(breaker.state).toBe('half-open'); // reopened for 0 ms: the next call is a probe again
    expect(changes.at(-1)).toBe('half-open>open probe-timeout @1000');
  });

  it('refuses a probeTimeoutMs that is not a number > 0, naming it', () => {
    for (const bad of [0, -1, Number.NaN, '5', null]) {
      expect(() => circuitBreaker({ probeTimeoutMs: bad as number })).toThrow(/`probeTimeoutMs`/);
    }
  });
});
