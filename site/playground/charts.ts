// Hand-drawn SVG charts for the playground: a line chart and a grouped bar chart, with axes and
// a legend. No dependency: the page works offline.

const NS = 'http://www.w3.org/2000/svg';

export interface Series {
  readonly name: string;
  readonly color: string;
  readonly points: readonly (readonly [number, number])[];
}

function el(name: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A round step for about `n` ticks over [0, max]. */
function tickStep(max: number, n = 5): number {
  if (!(max > 0)) return 1;
  const raw = max / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
}

const fmt = (v: number) => (Math.abs(v) >= 10_000 ? `${(v / 1000).toFixed(0)}k` : String(Number(v.toPrecision(4))));

interface Frame {
  readonly svg: SVGSVGElement;
  readonly x: (v: number) => number;
  readonly y: (v: number) => number;
}

function frame(svg: SVGSVGElement, xMax: number, yMax: number, xLabel: string, yLabel: string): Frame {
  svg.replaceChildren();
  const [w, h] = [Number(svg.viewBox.baseVal.width) || 800, Number(svg.viewBox.baseVal.height) || 300];
  const m = { l: 60, r: 20, t: 30, b: 40 };
  const x = (v: number) => m.l + (v / (xMax || 1)) * (w - m.l - m.r);
  const y = (v: number) => h - m.b - (v / (yMax || 1)) * (h - m.t - m.b);
  const axis = el('g', { fill: '#5b6472', 'font-size': 11 });
  const ys = tickStep(yMax);
  for (let v = 0; v <= yMax + 1e-9; v += ys) {
    axis.append(el('line', { x1: m.l, x2: w - m.r, y1: y(v), y2: y(v), stroke: '#e6e9ee' }));
    axis.append(el('text', { x: m.l - 6, y: y(v) + 4, 'text-anchor': 'end' }, fmt(v)));
  }
  const xs = tickStep(xMax, 8);
  for (let v = 0; xLabel !== '' && v <= xMax + 1e-9; v += xs) {
    axis.append(el('text', { x: x(v), y: h - m.b + 16, 'text-anchor': 'middle' }, fmt(v)));
  }
  axis.append(el('line', { x1: m.l, x2: w - m.r, y1: y(0), y2: y(0), stroke: '#5b6472' }));
  axis.append(el('text', { x: (m.l + w - m.r) / 2, y: h - 6, 'text-anchor': 'middle' }, xLabel));
  axis.append(el('text', { x: 12, y: m.t - 12 }, yLabel));
  svg.append(axis);
  return { svg, x, y };
}

function legend(svg: SVGSVGElement, items: readonly { name: string; color: string }[]): void {
  const g = el('g', { 'font-size': 12 });
  let at = 260;
  for (const s of items) {
    g.append(el('rect', { x: at, y: 8, width: 12, height: 12, fill: s.color, rx: 2 }));
    g.append(el('text', { x: at + 16, y: 18, fill: '#1d2330' }, s.name));
    at += 24 + s.name.length * 7;
  }
  svg.append(g);
}

/** Draws `series` as lines; marks the svg `data-drawn` with the number of lines drawn. */
export function lineChart(svg: SVGSVGElement, series: readonly Series[], xLabel: string, yLabel: string): void {
  const xMax = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[0])));
  const yMax = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[1])));
  const f = frame(svg, xMax, yMax * 1.05, xLabel, yLabel);
  for (const s of series) {
    const d = s.points.map(([a, b], i) => `${i === 0 ? 'M' : 'L'}${f.x(a).toFixed(1)},${f.y(b).toFixed(1)}`).join('');
    svg.append(el('path', { d, fill: 'none', stroke: s.color, 'stroke-width': 2, 'data-series': s.name }));
  }
  legend(svg, series);
  svg.dataset.drawn = String(series.length);
}

/** Draws bars: one group per label, one bar per value. */
export function barChart(
  svg: SVGSVGElement,
  labels: readonly string[],
  groups: readonly { name: string; color: string; values: readonly number[] }[],
  yLabel: string,
): void {
  const yMax = Math.max(1, ...groups.flatMap((g) => g.values));
  const f = frame(svg, labels.length, yMax * 1.05, '', yLabel);
  const slot = f.x(1) - f.x(0);
  const bw = (slot * 0.7) / groups.length;
  labels.forEach((label, i) => {
    groups.forEach((g, j) => {
      const v = g.values[i] ?? 0;
      const x0 = f.x(i) + slot * 0.15 + j * bw;
      svg.append(
        el('rect', { x: x0, y: f.y(v), width: bw - 2, height: f.y(0) - f.y(v), fill: g.color, 'data-value': v }),
      );
    });
    svg.append(
      el(
        'text',
        { x: f.x(i) + slot / 2, y: f.y(0) + 28, 'text-anchor': 'middle', 'font-size': 12, fill: '#1d2330' },
        label,
      ),
    );
  });
  legend(svg, groups);
  svg.dataset.drawn = String(labels.length);
}
