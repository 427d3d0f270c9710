/** docs/snapshots.md's "Class parameters" table and docs/parameters.md hold the VolumeSnapshotClass keys the code reads. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_COPY_ANNOTATION, SnapshotCopyStateSchema } from '../../lib/contract/index.js';
import { SNAPSHOT_CLASS_KEYS } from '../../lib/storageclass/snapshot-class.js';

const read = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');

/** The first cell of each row of the table under `heading`. */
function firstCells(doc: string, heading: string): string {
  const start = doc.indexOf(heading);
  expect(start, heading).toBeGreaterThan(-1);
  const rest = doc.slice(start + heading.length);
  const end = rest.search(/\n#{2,3} /);
  return (end < 0 ? rest : rest.slice(0, end))
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => l.split(' | ')[0])
    .join(' ');
}

describe('VolumeSnapshotClass parameters in the docs', () => {
  it('every key the reader knows has a row in docs/snapshots.md "Class parameters"', () => {
    const cells = firstCells(read('snapshots.md'), '### Class parameters');
    const documented = (key: string) => cells.includes(`\`${key.replace(/_N$/, '_N').replace(/\*$/, '')}`);
    expect(SNAPSHOT_CLASS_KEYS.filter((key) => !documented(key))).toEqual([]);
  });

  it('the copy keys are listed among the differences from the driver in docs/parameters.md', () => {
    const cells = firstCells(read('parameters.md'), '## Where volhook differs from the driver, on purpose');
    expect(cells).toContain('`copyToRegion`');
    expect(cells).toContain('`copyToRegionKmsKeyId`');
  });

  it("docs/snapshots.md names the copy's annotation and every state it takes", () => {
    const doc = read('snapshots.md').replace(/\s+/g, ' ');
    expect(doc).toContain(`\`${SNAPSHOT_COPY_ANNOTATION}\``);
    for (const state of SnapshotCopyStateSchema.options) expect(doc, state).toContain(`\`${state}\``);
  });
});
