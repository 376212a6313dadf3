/**
 * Chart specifications for `ebb simulate --svg/--png`: Vega-Lite 5 documents built from the
 * same data the command prints with `--json`. Each has a title, axes with units and a legend.
 * Rendering (Vega → SVG, resvg → PNG) lives in charts-render.ts.
 */

// The charts live by model in charts-network.ts, charts-retry.ts and charts-resilience.ts, on the
// shared pieces of charts-spec.ts; this module is their one entry point.

export { backoffChart, ceilingChart, stationsChart, wifiChart } from './charts-network.js';
export { brownoutChart, outageChart, slowTailChart } from './charts-resilience.js';
export { contentionChart, delaysChart, overloadChart } from './charts-retry.js';
export { type ChartSpec, strategyScale } from './charts-spec.js';
