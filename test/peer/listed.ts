/** docs/parameters.md's "Deliberate differences from the EBS CSI driver" table, read as rows. */
import { readFileSync } from 'node:fs';
import type { Difference } from './matrix.js';

export const SECTION = '## Deliberate differences from the EBS CSI driver';

/** Pure: the rows of the section's table (claim, field, volhook, driver; the cells in backticks). */
export function parseDifferences(doc: string): Difference[] {
  const start = doc.indexOf(SECTION);
  if (start < 0) throw new Error(`no "${SECTION}" in the document`);
  const rest = doc.slice(start + SECTION.length);
  const end = rest.search(/\n## /);
  const rows = (end < 0 ? rest : rest.slice(0, end)).split('\n').filter((l) => l.startsWith('| `'));
  return rows.map((row) => {
    const cells = row.split(' | ').map((c) => c.replace(/^\|? ?`?|`? ?\|?$/g, ''));
    const [claim, field, volhook, ebsCsi] = cells;
    if (claim === undefined || field === undefined || volhook === undefined || ebsCsi === undefined) throw new Error(`a row without four cells: ${row}`);
    return { claim, field, volhook, ebsCsi };
  });
}

export function listedDifferences(): Difference[] {
  return parseDifferences(readFileSync(new URL('../../docs/parameters.md', import.meta.url), 'utf8'));
}
