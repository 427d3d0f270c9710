/**
 * docs/divergences.md names, for each divergence from a real cluster, the tests that now hold
 * it (`file › test name`): each must exist, so that the table cannot cite a test renamed or gone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const doc = readFileSync(new URL('docs/divergences.md', root), 'utf8');

/** The table's rows: their number and the `file › name` citations of their last cell. */
function rows(text: string): Array<{ row: string; tests: Array<{ file: string; name: string }> }> {
  return text
    .split('\n')
    .filter((line) => /^\| \d+ \|/.test(line))
    .map((line) => {
      const cells = line.split(' | ');
      const tests = [...(cells.at(-1) ?? '').matchAll(/`([^`›]+) › ([^`]+)`/g)].map((m) => ({ file: m[1]!, name: m[2]! }));
      return { row: cells[0]!.replace('|', '').trim(), tests };
    });
}

/** Whether `file` has a test titled `name`. */
function hasTest(file: string, name: string): boolean {
  const path = new URL(file, root);
  return existsSync(path) && readFileSync(path, 'utf8').includes(name);
}

describe('docs/divergences.md', () => {
  it('every row cites at least one test, and every test cited exists', () => {
    const table = rows(doc);
    expect(table.map((r) => r.row)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    for (const { row, tests } of table) {
      expect(tests.length, `row ${row}`).toBeGreaterThan(0);
      for (const { file, name } of tests) expect(hasTest(file, name), `row ${row}: ${file} › ${name}`).toBe(true);
    }
  });

  it('the check reads the citations: a test name or file that does not exist is found', () => {
    const altered = doc.replace('› recorded, disk and instance ours', '› recorded, disk and instance theirs').replace('test/e2e/migration.test.ts ›', 'test/e2e/no-such.test.ts ›');
    const missing = rows(altered).flatMap(({ tests }) => tests.filter(({ file, name }) => !hasTest(file, name)).map(({ file }) => file));
    expect(missing).toEqual(['test/reconcile/inline-attach.test.ts', 'test/e2e/no-such.test.ts']);
  });
});
