import { presets, describePolicy as schedule } from 'ebb';
import { describe, expect, it } from 'vitest';
import {
  budgetFrom,
  contentionModel,
  delaysModel,
  ethernetModel,
  overloadModel,
  parseRange,
  rateFrom,
  strategiesFrom,
  wifiModel,
} from './simulate.js';

const io = { out: () => {}, progress: { isTTY: false, write: () => true } };
const env = { clock: { now: () => 0, sleep: () => Promise.resolve() }, random: Math.random };

describe('flag parsing', () => {
  it('reads ranges, steps and lists', () => {
    expect(parseRange('--x', '1..5')).toEqual([1, 2, 3, 4, 5]);
    expect(parseRange('--x', '10..50:10')).toEqual([10, 20, 30, 40, 50]);
    expect(parseRange('--x', '5,10,20')).toEqual([5, 10, 20]);
    expect(parseRange('--x', '7')).toEqual([7]);
    expect(() => parseRange('--x', '5..1')).toThrow(/--x expects FROM..TO/);
    expect(() => parseRange('--x', '0,1')).toThrow(/--x expects a whole number >= 1/);
    expect(() => parseRange('--x', 'a')).toThrow(/--x/);
  });

  it("names Brooker's strategies from base and cap, presets by id, and applies --max-attempts", () => {
    const s = strategiesFrom('exponential,full,aws-standard', 100, 1_000, 4);
    expect(Object.keys(s)).toEqual(['exponential', 'full', 'aws-standard']);
    expect(schedule(s.exponential as never, 5).rows.map((r) => r.delayMs)).toEqual([200, 400, 800]);
    expect(s['aws-standard']?.maxAttempts).toBe(4);
    expect(strategiesFrom('default', 5, 10).default).toBe(presets.default);
    expect(() => strategiesFrom('fast', 5, 10)).toThrow(/unknown strategy "fast"; strategies: none, exponential/);
  });

  it('builds budgets and rate controllers from ebb/rate, fresh for each run', () => {
    const token = budgetFrom('token:4:0.5');
    const a = token(env as never);
    expect(a).not.toBe(token(env as never));
    // gRPC throttling: retries stop once tokens fall to half of 4.
    a.recordFailure?.(new Error('x'));
    expect(a.tryAcquireRetry(new Error('x'))).toBe(true);
    a.recordFailure?.(new Error('x'));
    expect(a.tryAcquireRetry(new Error('x'))).toBe(false);
    expect(typeof budgetFrom('ratio:0.1')(env as never).tryAcquireRetry).toBe('function');
    expect(typeof budgetFrom('aws-quota')(env as never).tryAcquireRetry).toBe('function');
    expect(typeof rateFrom('adaptive')(env as never).acquire).toBe('function');
    expect(() => budgetFrom('lots')).toThrow(/--budget expects token/);
    expect(() => rateFrom('fast')).toThrow(/--rate expects adaptive/);
  });
});

describe('models', () => {
  it('wifi prints the simulation beside Bianchi, and --json holds τ and p', () => {
    const sim = wifiModel({ stations: '10', slots: '100000' }, io);
    expect(sim.doc.transmitProbability).toBeCloseTo(
      (sim.doc.bianchi as { transmitProbability: number }).transmitProbability,
      2,
    );
    expect(sim.doc.collisionProbability).toBeGreaterThan(0.25);
    expect(sim.text).toMatch(/τ sim\s+τ Bianchi\s+p sim\s+p Bianchi/);
    expect(() => wifiModel({ stations: '5', sweepStations: '5..10' }, io)).toThrow(/cannot be combined/);
  });

  it('ethernet: one run reports E(c); the ceiling sweep idles stations between frames by default', () => {
    const one = ethernetModel({ stations: '8', slots: '20000' }, io);
    expect(one.text).toMatch(/ c\s+draws\s+measured\s+E\(c\)/);
    expect(one.doc.thinkSlots).toBe(0);
    const sweep = ethernetModel({ stations: '8', slots: '5000', sweepCeiling: '2..4' }, io);
    expect(
      (sweep.doc.points as { ceiling: number; thinkSlots: number }[]).map((p) => [p.ceiling, p.thinkSlots]),
    ).toEqual([
      [2, 32],
      [3, 32],
      [4, 32],
    ]);
    expect(() => ethernetModel({ ceiling: '3', sweepCeiling: '1..2' }, io)).toThrow(/cannot be combined/);
  });

  it('contention averages the runs per strategy', () => {
    const sim = contentionModel({ clients: '10', runs: '3', strategies: 'none,full' }, io);
    const [point] = sim.doc.points as { clients: number; results: { strategy: string; calls: number }[] }[];
    expect(point?.results.map((r) => r.strategy)).toEqual(['none', 'full']);
    expect(sim.text).toMatch(/base 5 ms, cap 2 s/);
  });

  it('overload runs each strategy through retry() and names the budget it used', async () => {
    const sim = await overloadModel(
      { clients: '50', outage: '2s', strategies: 'full,default', budget: 'token', capacity: '20' },
      io,
    );
    type R = { strategy: string; amplification: number; giveUpReasons: Record<string, number>; series: unknown[] };
    const results = sim.doc.results as R[];
    expect(results.map((r) => r.strategy)).toEqual(['full', 'default']);
    expect(JSON.parse(JSON.stringify(sim.doc)).budget).toBe('token');
    // gRPC's default bucket (10 tokens) allows 5 retries in a 2 s outage, then refuses.
    for (const r of results) {
      expect(r.amplification).toBeLessThan(1.2);
      expect(r.giveUpReasons.budget).toBeGreaterThan(40);
      expect(r.series.length).toBeGreaterThan(0);
    }
  });

  it('delays samples any policy the flags describe', () => {
    const sim = delaysModel({ preset: 'aws-standard', runs: '1000' });
    expect((sim.doc.rows as unknown[]).length).toBe(2);
    const custom = delaysModel({ initial: '1s', jitter: 'equal', runs: '100', attempts: '3' });
    expect(custom.doc.name).toBe('custom');
    expect(custom.text).toMatch(/delays — custom/);
  });
});
