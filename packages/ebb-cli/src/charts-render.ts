import type { ChartSpec } from './charts.js';
import { UsageError } from './usage-error.js';

/** The packages `--svg` and `--png` need; optional peers, so `ebb run` and `ebb schedule` stay small. */
export const CHART_PACKAGES = 'vega vega-lite @resvg/resvg-js';

/** Loads an optional charting package, or says in one line how to install it. */
export async function loadOptional<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new UsageError(
        `--svg and --png need ${name}, which ebb-cli does not install by itself: npm i ${CHART_PACKAGES}`,
      );
    }
    throw error;
  }
}

/**
 * Advance widths of DejaVu Sans (the font the charts ask for, and what resvg finds on Debian), in
 * 1/2048 em, for the characters charts use most. Without a canvas, Vega estimates every character
 * at 0.8 em, about a third too wide: titles and legends then reserve space they never use, which
 * showed as a blank margin right of every chart. vl-convert sets its own measure the same way.
 */
const DEJAVU_ADVANCE: Readonly<Record<string, number>> = {
  ' ': 651,
  a: 1255,
  b: 1300,
  c: 1126,
  d: 1300,
  e: 1260,
  f: 721,
  g: 1300,
  h: 1298,
  i: 569,
  j: 569,
  k: 1186,
  l: 569,
  m: 1995,
  n: 1298,
  o: 1253,
  p: 1300,
  q: 1300,
  r: 842,
  s: 1067,
  t: 803,
  u: 1298,
  v: 1212,
  w: 1675,
  x: 1212,
  y: 1212,
  z: 1075,
  I: 604,
  M: 1767,
  W: 2025,
  '.': 651,
  ',': 651,
  ':': 690,
  "'": 563,
  '(': 799,
  ')': 799,
  '-': 739,
  '/': 690,
  '|': 690,
  '%': 1946,
};

/** Text width in px of `text` at `fontSize` in DejaVu Sans (bold about 12 % wider). */
export function textWidth(text: string, fontSize: number, bold = false): number {
  let units = 0;
  for (const ch of text) {
    units +=
      DEJAVU_ADVANCE[ch] ??
      (ch >= '0' && ch <= '9' ? 1303 : ch >= 'A' && ch <= 'Z' ? 1430 : ch.charCodeAt(0) > 0x2000 ? 1638 : 1270);
  }
  return (units / 2048) * fontSize * (bold ? 1.12 : 1);
}

/** Vega's `textMetrics.width`, for a text item (its font size, weight and length limit). */
function itemTextWidth(
  item: { fontSize?: number; fontWeight?: string | number; limit?: number },
  text: unknown,
): number {
  const line = text == null ? '' : String(text).trim();
  const weight = item.fontWeight;
  const width = textWidth(
    line,
    item.fontSize ?? 11,
    weight === 'bold' || (typeof weight === 'number' && weight >= 600),
  );
  return item.limit !== undefined && item.limit > 0 ? Math.min(width, item.limit) : width;
}

/**
 * Renders a Vega-Lite specification to SVG text with Vega's headless renderer. Vega and
 * Vega-Lite are optional peer dependencies, loaded on first use: commands that draw nothing
 * neither load nor need them.
 *
 * Why Vega-Lite rather than Observable Plot: Vega's SVG carries the title, the axes and the
 * legends itself (Plot puts titles and swatch legends in HTML around the SVG), two panels
 * concatenate into one SVG, and it needs no DOM implementation in Node.
 */
export async function renderSvg(spec: ChartSpec): Promise<string> {
  const [vega, vl] = await Promise.all([
    loadOptional('vega', () => import('vega')),
    loadOptional('vega-lite', () => import('vega-lite')),
  ]);
  (vega as unknown as { textMetrics: { width: typeof itemTextWidth } }).textMetrics.width = itemTextWidth;
  const compiled = vl.compile(spec as never).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * Renders SVG text to PNG with resvg (at twice the SVG's size, on white). Text needs a system
 * font: on Debian, the `fonts-dejavu-core` package (the charts ask for DejaVu Sans).
 */
export async function renderPng(svg: string): Promise<Buffer> {
  const { Resvg } = await loadOptional('@resvg/resvg-js', () => import('@resvg/resvg-js'));
  const resvg = new Resvg(svg, {
    background: 'white',
    fitTo: { mode: 'zoom', value: 2 },
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}
