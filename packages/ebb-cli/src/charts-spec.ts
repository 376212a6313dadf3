// What every chart of `ebb simulate` shares: the spec type, the look, the strategy colours, the
// x axis of whole numbers, the line panel and the two-panel layout.

/** A Vega-Lite specification (kept loose: it is JSON handed to the compiler). */
export type ChartSpec = Record<string, unknown>;

export type Row = Record<string, number | string | null>;

export const WIDTH = 420;
export const HEIGHT = 260;

/** Shared look: a white background, DejaVu Sans (what resvg finds on Debian), readable sizes. */
const CONFIG = {
  background: 'white',
  font: 'DejaVu Sans',
  title: { fontSize: 15, anchor: 'start', subtitleFontSize: 11, subtitleColor: '#555' },
  axis: { labelFontSize: 11, titleFontSize: 12, grid: true },
  legend: {
    labelFontSize: 11,
    titleFontSize: 12,
    orient: 'bottom',
    direction: 'horizontal',
    // Two columns keep a legend of long labels no wider than its panel: wider, it would widen the
    // canvas and leave a blank margin right of the plot.
    columns: 2,
    labelLimit: 260,
  },
  view: { stroke: '#ccc' },
};

/** A chart document: the schema, the title and subtitle, the shared look. */
export function document(title: string, subtitle: string, body: ChartSpec): ChartSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: title, subtitle },
    config: CONFIG,
    ...body,
  };
}

/**
 * The strategies of `ebb simulate contention` in a fixed order with fixed colours (Tableau 10),
 * so that a strategy has the same colour in the bar chart and in the `--sweep-clients` lines.
 * Other strategies (presets) take the remaining colours in name order.
 */
const STRATEGY_COLORS: Readonly<Record<string, string>> = {
  none: '#e45756',
  exponential: '#f58518',
  full: '#4c78a8',
  equal: '#72b7b2',
  decorrelated: '#54a24b',
};
const SPARE_COLORS = ['#b279a2', '#ff9da6', '#9d755d', '#bab0ac', '#eeca3b'];

/** The colour scale of a set of strategies: the same strategy, the same colour, in every chart. */
export function strategyScale(strategies: Iterable<string>): { domain: string[]; range: string[] } {
  const names = [...new Set(strategies)];
  const known = Object.keys(STRATEGY_COLORS).filter((k) => names.includes(k));
  const others = names.filter((n) => !(n in STRATEGY_COLORS)).sort();
  const domain = [...known, ...others];
  return {
    domain,
    range: domain.map(
      (n, i) => STRATEGY_COLORS[n] ?? (SPARE_COLORS[(i - known.length) % SPARE_COLORS.length] as string),
    ),
  };
}

/**
 * An x encoding. Whole-number fields (rows, attempts, stations, ceilings) get whole-number ticks:
 * left to itself, Vega puts ticks at 1.0, 1.4, 1.8 on an axis of three rows.
 */
export function xEncoding(
  values: readonly Row[],
  x: { field: string; title: string; type?: 'quantitative' | 'ordinal' },
) {
  const type = x.type ?? 'quantitative';
  const xs = values.map((v) => v[x.field]).filter((v) => v !== null && v !== undefined);
  const whole = type === 'quantitative' && xs.every((v) => Number.isInteger(v));
  if (!whole) return { field: x.field, type, title: x.title };
  // A tick at each value when there are few (every row, every station count), else whole steps.
  const distinct = [...new Set(xs as number[])].sort((a, b) => a - b);
  const axis = distinct.length <= 16 ? { values: distinct, format: 'd' } : { tickMinStep: 1, format: 'd' };
  return { field: x.field, type, title: x.title, axis };
}

/**
 * A line (with points) panel: y against x, one line per `series`, colored with a legend. Series
 * that `analytic` picks (a model's prediction) are drawn first, as wide translucent dashed lines,
 * and the simulated ones over them with solid points: where simulation and model agree, both stay
 * visible instead of one hiding under the other.
 */
export function lines(
  values: Row[],
  x: { field: string; title: string; type?: 'quantitative' | 'ordinal' },
  y: { field: string; title: string; scale?: Record<string, unknown>; format?: string },
  series: { field: string; title: string; scale?: { domain: string[]; range: string[] } },
  extra: ChartSpec[] = [],
  analytic?: (name: string) => boolean,
): ChartSpec {
  const encoding = {
    x: xEncoding(values, x),
    y: {
      field: y.field,
      type: 'quantitative',
      title: y.title,
      ...(y.scale ? { scale: y.scale } : {}),
      ...(y.format ? { axis: { format: y.format } } : {}),
    },
    color: {
      field: series.field,
      type: 'nominal',
      title: series.title,
      ...(series.scale ? { scale: series.scale } : {}),
    },
  };
  if (analytic) {
    const model = values.filter((v) => analytic(String(v[series.field])));
    const simulated = values.filter((v) => !analytic(String(v[series.field])));
    return {
      width: WIDTH,
      height: HEIGHT,
      layer: [
        {
          data: { values: model },
          mark: { type: 'line', strokeWidth: 5, opacity: 0.45, strokeDash: [8, 5] },
          encoding,
        },
        {
          data: { values: simulated },
          mark: { type: 'line', strokeWidth: 1.5, point: { filled: true, size: 60 } },
          encoding,
        },
        ...extra,
      ],
    };
  }
  return {
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        data: { values },
        mark: { type: 'line', point: true, strokeWidth: 2 },
        encoding: {
          ...encoding,
          strokeDash: {
            field: series.field,
            type: 'nominal',
            title: series.title,
            // The same domain as the colours, so that one legend shows both.
            ...(series.scale ? { scale: { domain: series.scale.domain } } : {}),
          },
        },
      },
      ...extra,
    ],
  };
}

/** Two panels side by side under one title. */
export function pair(title: string, subtitle: string, left: ChartSpec, right: ChartSpec): ChartSpec {
  return document(title, subtitle, {
    hconcat: [left, right],
    resolve: { scale: { color: 'independent', strokeDash: 'independent' } },
  });
}
