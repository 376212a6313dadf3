import { describe, expect, it } from 'vitest';
import {
  backoffChart,
  ceilingChart,
  contentionChart,
  delaysChart,
  overloadChart,
  stationsChart,
  strategyScale,
  wifiChart,
} from './charts.js';
import { loadOptional, renderPng, renderSvg, textWidth } from './charts-render.js';
import { UsageError } from './usage-error.js';

/** Every title, axis title and legend title in a spec, wherever it is nested. */
function titles(spec: unknown, out: string[] = []): string[] {
  if (Array.isArray(spec)) for (const s of spec) titles(s, out);
  else if (spec && typeof spec === 'object') {
    for (const [k, v] of Object.entries(spec)) {
      if (k === 'title' && typeof v === 'string') out.push(v);
      else if (k === 'title' && v && typeof v === 'object' && 'text' in v)
        out.push(String((v as { text: unknown }).text));
      else titles(v, out);
    }
  }
  return out;
}

const contention = {
  runs: 10,
  points: [
    {
      clients: 50,
      results: [
        { strategy: 'exponential', calls: 620, timeMs: 36_000 },
        { strategy: 'full', calls: 330, timeMs: 2_900 },
      ],
    },
  ],
};

describe('chart specs', () => {
  it('carry a title and axis titles with units', () => {
    const spec = contentionChart(contention);
    const t = titles(spec);
    expect(t[0]).toBe('50 contending clients: work and time per backoff strategy');
    expect(t).toContain('calls (writes sent)');
    expect(t).toContain('time until the last client is done (ms)');
    const wifi = wifiChart({
      stations: 10,
      cwMin: 31,
      stages: 5,
      transmitProbability: 0.037,
      collisionProbability: 0.29,
      throughput: 0.75,
      bianchi: { transmitProbability: 0.0373, collisionProbability: 0.2898, throughput: 0.758 },
    });
    expect(JSON.stringify(wifi)).toContain('Bianchi (2000)');
  });

  it('draw a sweep of clients as lines, one per strategy', () => {
    const spec = contentionChart({
      runs: 1,
      points: [contention.points[0] as never, { ...contention.points[0], clients: 60 } as never],
    });
    expect(JSON.stringify(spec)).toContain('"type":"line"');
    expect(titles(spec)).toContain('clients');
  });

  it('leave out latencies of ceilings that delivered nothing (a log axis has no 0)', () => {
    const point = {
      collisionProbability: 1,
      throughput: 0,
      meanLatencySlots: 0,
      p99LatencySlots: 0,
      maxLatencySlots: 0,
      latencyStdDevSlots: 0,
      successes: 0,
    };
    const spec = ceilingChart({
      stations: 4,
      thinkSlots: 0,
      points: [
        { ceiling: 1, ...point },
        { ceiling: 2, ...point, successes: 5, meanLatencySlots: 3, maxLatencySlots: 9, latencyStdDevSlots: 2 },
      ],
    });
    const latency = (spec.hconcat as { layer: { data: { values: { ceiling: number }[] } }[] }[])[1]?.layer[0]?.data
      .values;
    expect(latency?.map((v) => v.ceiling)).toEqual([2, 2, 2]);
  });
});

describe('rendering', () => {
  it('renders SVG with the title, axes and legend, and a PNG of it', async () => {
    const spec = overloadChart({
      clients: 100,
      capacityPerSecond: 10,
      outageMs: 2_000,
      results: [
        {
          strategy: 'exponential',
          series: [0, 1, 2, 3].map((s) => ({ startMs: s * 1000, offeredPerSecond: s * 10, clientsServed: s * 20 })),
        },
        {
          strategy: 'full',
          series: [0, 1, 2, 3].map((s) => ({ startMs: s * 1000, offeredPerSecond: 5, clientsServed: s * 30 })),
        },
      ],
    });
    const svg = await renderSvg(spec);
    expect(svg).toMatch(/^<svg[^>]+width="\d+" height="\d+"/);
    for (const text of [
      '100 clients against a recovering service',
      'requests reaching the server (per second)',
      'time (s); shaded: outage',
      'strategy',
      'exponential',
      'full',
      'capacity 10/s',
    ]) {
      expect(svg).toContain(text);
    }
    const png = await renderPng(svg);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    // Twice the SVG's width, read from the IHDR chunk.
    expect(png.readUInt32BE(16)).toBe(2 * Number(/width="(\d+)"/.exec(svg)?.[1]));
  });

  it('renders the stations and delay charts too', async () => {
    const stations = await renderSvg(
      stationsChart({
        model: 'ethernet',
        points: [{ stations: 2, throughput: 0.9, collisionProbability: 0.1, meanLatencySlots: 2, p99LatencySlots: 5 }],
      }),
    );
    expect(stations).toContain('frame latency (slots)');
    const delays = await renderSvg(
      delaysChart({
        name: 'default',
        runs: 10,
        rows: [{ attempt: 1, p05Ms: 5, p50Ms: 50, p95Ms: 95, meanMs: 50, minMs: 0, maxMs: 100 }],
      }),
    );
    expect(delays).toContain('Delay distribution of default');
    expect(delays).toContain('wait before the next attempt (ms)');
  });
});

describe('loadOptional', () => {
  it('turns a missing charting package into one line that says what to install', async () => {
    const missing = () => import(`${'no-such-package-'}${'for-ebb'}`);
    await expect(loadOptional('vega', missing)).rejects.toThrow(
      '--svg and --png need vega, which ebb-cli does not install by itself: npm i vega vega-lite @resvg/resvg-js',
    );
    await expect(loadOptional('vega', missing)).rejects.toBeInstanceOf(UsageError);
  });

  it('passes other failures through, and the module when it loads', async () => {
    const broken = new SyntaxError('bad module');
    await expect(loadOptional('vega', () => Promise.reject(broken))).rejects.toBe(broken);
    await expect(loadOptional('x', async () => 42)).resolves.toBe(42);
  });
});

/** Every object in a spec that has `key`, wherever it is nested. */
function findAll(spec: unknown, key: string, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(spec)) for (const s of spec) findAll(s, key, out);
  else if (spec && typeof spec === 'object') {
    if (key in spec) out.push(spec as Record<string, unknown>);
    for (const v of Object.values(spec)) findAll(v, key, out);
  }
  return out;
}

const delaysDoc = (rows: number) => ({
  name: 'p',
  runs: 10,
  rows: Array.from({ length: rows }, (_, i) => ({
    attempt: i + 1,
    p05Ms: 1,
    p50Ms: 2,
    p95Ms: 3,
    meanMs: 2,
    minMs: 0,
    maxMs: 4,
  })),
});

describe('chart readability', () => {
  it('whole-number x values get whole-number ticks (1, 2, 3 — not 1.0, 1.4, 1.8)', () => {
    const x = findAll(delaysChart(delaysDoc(3)), 'field').find((e) => e.field === 'attempt' && 'axis' in e);
    expect(x?.axis).toEqual({ values: [1, 2, 3], format: 'd' });
    const many = findAll(delaysChart(delaysDoc(40)), 'field').find((e) => e.field === 'attempt' && 'axis' in e);
    expect(many?.axis).toEqual({ tickMinStep: 1, format: 'd' });
    // Fractional x (seconds in the overload chart) is left to Vega.
    const overload = overloadChart({
      clients: 1,
      capacityPerSecond: 1,
      outageMs: 500,
      results: [{ strategy: 'full', series: [{ startMs: 250, offeredPerSecond: 1, clientsServed: 1 }] }],
    });
    expect(findAll(overload, 'field').filter((e) => e.field === 's' && 'axis' in e)).toEqual([]);
  });

  it('draws the simulated series over the analytic one (Bianchi, E(c)), not under it', () => {
    const spec = stationsChart({
      model: 'wifi',
      points: [5, 10].map((stations) => ({
        stations,
        throughput: 0.8,
        meanDelayMs: 50,
        p99DelayMs: 300,
        bianchi: { throughput: 0.8, meanDelayMs: 50 },
      })),
    });
    for (const panel of spec.hconcat as { layer: { data: { values: { series: string }[] }; mark: object }[] }[]) {
      const [model, simulated] = panel.layer;
      expect(model?.data.values.every((v) => v.series.startsWith('Bianchi'))).toBe(true);
      expect(simulated?.data.values.length).toBeGreaterThan(0);
      expect(simulated?.data.values.some((v) => v.series.startsWith('Bianchi'))).toBe(false);
      expect(simulated?.mark).toMatchObject({ point: { filled: true } });
    }
    const eth = backoffChart({
      stations: 2,
      backoffByCollisions: [{ collisions: 1, meanSlots: 0.5, expectedSlots: 0.5 }],
    }) as { layer: { data: { values: { series: string }[] } }[] };
    expect(eth.layer[0]?.data.values.map((v) => v.series)).toEqual(['E(c) = (2^min(c,10) − 1)/2']);
    expect(eth.layer[1]?.data.values.map((v) => v.series)).toEqual(['simulated mean']);
  });

  it('gives a strategy the same colour in the contention bars and in the --sweep-clients lines', () => {
    const results = ['decorrelated', 'none', 'full', 'exponential', 'equal', 'sip'].map((strategy) => ({
      strategy,
      calls: 1,
      timeMs: 1,
    }));
    const colours = (spec: unknown) => {
      const map = new Map<string, string>();
      for (const e of findAll(spec, 'field').filter((e) => e.field === 'strategy' && 'scale' in e)) {
        const { domain, range } = e.scale as { domain: string[]; range?: string[] };
        if (range) for (const [i, d] of domain.entries()) map.set(d, range[i] as string);
      }
      return map;
    };
    const bars = colours(contentionChart({ runs: 1, points: [{ clients: 5, results }] }));
    const sweep = colours(
      contentionChart({
        runs: 1,
        points: [
          { clients: 5, results },
          { clients: 9, results: [...results].reverse() },
        ],
      }),
    );
    expect(bars.size).toBe(6);
    expect([...sweep.entries()].sort()).toEqual([...bars.entries()].sort());
    expect(new Set(bars.values()).size).toBe(6); // six strategies, six colours
    expect(strategyScale(['full', 'none']).range).toEqual(strategyScale(['none', 'full', 'equal']).range.slice(0, 2));
  });

  it('renders the wifi labels whole, and no blank margin right of the plot', async () => {
    const svg = await renderSvg(
      wifiChart({
        stations: 10,
        cwMin: 31,
        stages: 5,
        transmitProbability: 0.037,
        collisionProbability: 0.29,
        throughput: 0.75,
        bianchi: { transmitProbability: 0.0373, collisionProbability: 0.2898, throughput: 0.758 },
      }),
    );
    expect(svg).toContain('τ (transmit, per slot)</text>');
    expect(svg).not.toContain('…');
    const eth = await renderSvg(
      backoffChart({ stations: 2, backoffByCollisions: [{ collisions: 1, meanSlots: 0.5, expectedSlots: 0.5 }] }),
    );
    // The plot is 420 px wide, its axis about 75: Vega's default estimate of text (0.8 em a
    // character) made this chart 731 px wide, a third of it blank.
    const width = Number(/^<svg[^>]* width="(\d+)"/.exec(eth)?.[1]);
    expect(width).toBeGreaterThan(420);
    expect(width).toBeLessThan(560);
  });

  it('measures DejaVu Sans text: narrow letters narrow, digits 0.636 em, bold wider', () => {
    expect(textWidth('0123456789', 10)).toBeCloseTo((10 * 1303 * 10) / 2048, 6);
    expect(textWidth('iiii', 12)).toBeLessThan(textWidth('mmmm', 12) / 3);
    expect(textWidth('Title', 15, true)).toBeGreaterThan(textWidth('Title', 15));
    expect(textWidth('', 15)).toBe(0);
  });
});
