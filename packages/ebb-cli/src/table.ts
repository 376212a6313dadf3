/** Renders rows as a text table: right-aligned columns, a header, two spaces between columns. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  // A loop, not Math.max(...rows): spreading 100,000 rows overflows the stack.
  const widths = header.map((h, i) => rows.reduce((w, r) => Math.max(w, (r[i] ?? '').length), h.length));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padStart(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
