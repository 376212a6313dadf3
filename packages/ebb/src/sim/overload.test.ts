import { describe, expect, it } from 'vitest';
import { exponential } from '../backoff/exponential.js';
import { noJitter } from '../backoff/jitter-none.js';
import { presets } from '../backoff/presets.js';
import { ratioBudget, tokenBudget } from '../rate/index.js';
import type { RateController } from '../retry/options.js';
import { brookerStrategies } from './contention.js';
import { type SimEnvironment, SimulatedServerError, simulateOverload } from './overload.js';

const strategies = brookerStrategies({ baseMs: 100, capMs: 10_000 });
const scenario = { clients: 1_000, capacityPerSecond: 100, queueLimit: 100, outageMs: 10_000, seed: 3 };

describe('simulateOverload', () => {
  it('un-jittered retries spike together after recovery; full jitter spreads them out', async () => {
    const plain = await simulateOverload({ ...scenario, backoff: strategies.exponential });
    const full = await simulateOverload({ ...scenario, backoff: strategies.full });
    // Clients that failed together retry together: several times the capacity in one second.
    expect(plain.peakOfferedPerSecondAfterRecovery).toBeGreaterThan(4 * plain.capacityPerSecond);
    expect(full.peakOfferedPerSecondAfterRecovery).toBeLessThan(plain.peakOfferedPerSecondAfterRecovery / 2.5);
    expect(full.peakOfferedPerSecondAfterRecovery).toBeLessThan(2.5 * full.capacityPerSecond);
    // The spike is followed by silence: most seconds after recovery see no request at all.
    const after = (r: typeof plain) => r.series.filter((b) => b.startMs >= r.outageMs && b.startMs < 40_000);
    expect(after(plain).filter((b) => b.offeredPerSecond === 0).length).toBeGreaterThan(after(plain).length / 2);
    expect(after(full).filter((b) => b.offeredPerSecond === 0).length).toBe(0);
    // Everyone is served in the end, the jittered fleet much sooner.
    for (const r of [plain, full]) {
      expect(r.served).toBe(1_000);
      expect(r.gaveUp).toBe(0);
      expect(r.unfinished).toBe(0);
      expect(r.allServedAtMs).toBeGreaterThan(r.outageMs + 1_000 * (1_000 / r.capacityPerSecond) * 0.9);
    }
    expect(full.allServedAtMs).toBeLessThan((plain.allServedAtMs ?? 0) * 0.6);
    // The series adds up: every request in a bin, every client served once.
    const total = plain.series.reduce((sum, b) => sum + b.offeredPerSecond * (b.startMs >= 0 ? 1 : 0), 0);
    expect(total).toBe(plain.requests);
    expect(plain.series.at(-1)?.clientsServed).toBe(1_000);
    expect(plain.peakQueue).toBe(100);
  });

  it('an outageMs of -0 is reported back as 0 (found by the option fuzzer)', async () => {
    const r = await simulateOverload({ clients: 5, outageMs: -0, horizonMs: 5_000 });
    expect(Object.is(r.outageMs, 0)).toBe(true);
  });

  it('a retry budget bounds the amplification of a total outage', async () => {
    const outage = { clients: 1_000, outageMs: 120_000, horizonMs: 120_000, backoff: presets.awsStandard, seed: 1 };
    const plain = await simulateOverload(outage);
    expect(plain.amplification).toBe(3);
    expect(plain.giveUpReasons).toEqual({ attempts: 1_000 });
    const token = await simulateOverload({ ...outage, budget: tokenBudget({ maxTokens: 100, tokenRatio: 0.1 }) });
    expect(token.amplification).toBeLessThanOrEqual(1.2);
    expect(token.giveUpReasons.budget).toBeGreaterThan(900);
    const ratio = await simulateOverload({ ...outage, budget: ({ clock }: SimEnvironment) => ratioBudget({ clock }) });
    expect(ratio.amplification).toBeLessThanOrEqual(1.3);
    expect(ratio.gaveUpShare).toBe(1);
  });

  it('asks isFailure: a failure it will not retry ends the client at once', async () => {
    const r = await simulateOverload({
      clients: 200,
      isFailure: ({ error }) => !(error instanceof SimulatedServerError && error.code === 'outage'),
    });
    expect(r.amplification).toBe(1);
    expect(r.giveUpReasons).toEqual({ fatal: 200 });
  });

  it("paces every attempt through the rate controller, on the simulation's clock", async () => {
    let acquired = 0;
    const outcomes: Record<string, number> = {};
    const paced = (env: SimEnvironment): RateController => {
      let next = 0;
      return {
        acquire() {
          acquired++;
          const now = env.clock.now();
          const at = next > now ? next : now;
          next = at + 20; // 50 requests a second
          return env.clock.sleep(at - now);
        },
        record(outcome) {
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        },
      };
    };
    const r = await simulateOverload({ ...scenario, clients: 300, backoff: strategies.exponential, rate: paced });
    expect(acquired).toBe(r.requests);
    expect((outcomes.success ?? 0) + (outcomes.failure ?? 0) + (outcomes.throttled ?? 0)).toBe(r.requests);
    expect(outcomes.success).toBe(300);
    for (const b of r.series) expect(b.offeredPerSecond).toBeLessThanOrEqual(52);
  });

  it("honours the server's Retry-After on shed requests", async () => {
    // Waits of at most 1 s: a 5 s hint lengthens every wait after a shed.
    const short = brookerStrategies({ baseMs: 100, capMs: 1_000 }).full;
    const base = { ...scenario, clients: 600, queueLimit: 20, backoff: short };
    const shed = (r: Awaited<ReturnType<typeof simulateOverload>>) =>
      r.series.filter((b) => b.startMs >= r.outageMs).reduce((sum, b) => sum + b.rejectedPerSecond, 0);
    const none = await simulateOverload(base);
    const hinted = await simulateOverload({ ...base, retryAfterMs: 5_000 });
    expect(shed(none)).toBeGreaterThan(100);
    // Waiting at least 5 s after a shed: fewer requests shed again.
    expect(shed(hinted)).toBeLessThan(shed(none));
    expect(hinted.amplification).toBeLessThan(none.amplification);
    // A hint longer than the executor's maxRetryAfterMs (60 s) ends the operation instead.
    const long = await simulateOverload({ ...base, retryAfterMs: 120_000 });
    expect(long.giveUpReasons['retry-after']).toBeGreaterThan(0);
  });

  it('is deterministic for a seed, stops at the horizon, and rejects bad options', async () => {
    const small = { clients: 50, outageMs: 2_000, backoff: strategies.full };
    expect(await simulateOverload(small)).toEqual(await simulateOverload(small));
    expect((await simulateOverload({ ...small, seed: 2 })).requests).not.toBe((await simulateOverload(small)).requests);
    const cut = await simulateOverload({ ...small, outageMs: 100_000, horizonMs: 5_000 });
    expect(cut.unfinished).toBe(50);
    expect(cut.allServedAtMs).toBeNull();
    await expect(simulateOverload({ clients: 0 })).rejects.toThrow(/`clients`/);
    await expect(simulateOverload({ capacityPerSecond: 0 })).rejects.toThrow(/`capacityPerSecond`/);
    await expect(simulateOverload({ isFailure: 1 as never })).rejects.toThrow(/`isFailure`/);
    await expect(simulateOverload({ retryIf: () => true } as never)).rejects.toThrow(/unknown option `retryIf`/);
    await expect(simulateOverload({ outage: 5 } as never)).rejects.toThrow(/unknown option `outage`/);
    // The executor's options are checked once, under the simulator's name, not per client.
    await expect(simulateOverload({ backoff: {} as never })).rejects.toThrow(
      /simulateOverload\(\): expected `backoff`/,
    );
    await expect(simulateOverload({ attemptTimeoutMs: -1 })).rejects.toThrow(
      /simulateOverload\(\): .*`attemptTimeoutMs`/,
    );
    await expect(simulateOverload({ budget: {} as never })).rejects.toThrow(/`budget`/);
  });

  it('simulates a policy that never stops (maxAttempts: Infinity) as retrying until the horizon', async () => {
    const endless = await simulateOverload({
      clients: 20,
      outageMs: 100_000,
      horizonMs: 20_000,
      backoff: exponential({ maxAttempts: Infinity, jitter: noJitter }),
    });
    expect(endless.unfinished).toBe(20);
    expect(endless.giveUpReasons).toEqual({});
    expect(endless.requests).toBeGreaterThan(20);
  });
});
