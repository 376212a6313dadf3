import type { ChartSpec } from './charts.js';

/**
 * Renders a Vega-Lite specification to SVG text with Vega's headless renderer. Vega and
 * Vega-Lite are loaded on first use, so commands that draw nothing do not pay for them.
 *
 * Why Vega-Lite rather than Observable Plot: Vega's SVG carries the title, the axes and the
 * legends itself (Plot puts titles and swatch legends in HTML around the SVG), two panels
 * concatenate into one SVG, and it needs no DOM implementation in Node.
 */
export async function renderSvg(spec: ChartSpec): Promise<string> {
  const [vega, vl] = await Promise.all([import('vega'), import('vega-lite')]);
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
  const { Resvg } = await import('@resvg/resvg-js');
  const resvg = new Resvg(svg, {
    background: 'white',
    fitTo: { mode: 'zoom', value: 2 },
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}
