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
