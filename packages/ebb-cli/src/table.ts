/** Renders rows as a text table: right-aligned columns, a header, two spaces between columns. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padStart(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
