/** Plain-text output of the benchmark: durations, shares, sizes and aligned tables. */

export const seconds = (ms: number | undefined, digits = 1): string => (ms === undefined ? '—' : `${(ms / 1000).toFixed(digits)} s`);

export const percent = (part: number, whole: number): string => (whole === 0 ? '—' : `${((100 * part) / whole).toFixed(1)} %`);

export const mib = (bytes: number | undefined): string => (bytes === undefined ? '—' : `${(bytes / 1024 / 1024).toFixed(1)} MiB`);

export const ratio = (value: number | undefined, digits = 2): string => (value === undefined || !Number.isFinite(value) ? '—' : `${value.toFixed(digits)}×`);

/** Columns padded to their widest cell; numbers-looking cells right-aligned. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, options: { indent?: string; alignNumbers?: boolean } = {}): string {
  const indent = options.indent ?? '  ';
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = (cell: string) => (options.alignNumbers ?? true) && /^[-+]?[\d.,]+(\s?(s|%|×|MiB|ms))?$|^—$/.test(cell);
  const line = (cells: readonly string[]) =>
    indent +
    cells
      .map((c, i) => (i > 0 && numeric(c) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = indent + widths.map((w) => '─'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Writes a line to stdout at once (progress lines during long runs). */
export function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}
