import { describe, expect, it } from 'vitest';
import { ceilingChart, contentionChart, delaysChart, overloadChart, stationsChart, wifiChart } from './charts.js';
import { loadOptional, renderPng, renderSvg } from './charts-render.js';
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
