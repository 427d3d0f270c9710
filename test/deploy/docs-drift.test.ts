/**
 * Docs that state what the code does, held to the code: the README's forwarder table lists
 * every variable the forwarder's configuration reads, and no other. (The deployment's
 * resources are held to the packaged template in package.test.ts, the IAM tables are generated
 * by `npm run docs:iam` and checked in test/iam, the StorageClass parameters in
 * test/storageclass/parameters-v164.test.ts, the chart's values by its generated schema.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV_VARS, RETIRED_ENV_VARS } from '../../lib/forwarder/config.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The variables a markdown table names in its first column. */
function firstColumnVariables(table: string): string[] {
  return table
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`(VOLHOOK_[A-Z_]+)`/g)].map((m) => m[1]!));
}

describe("the README's forwarder table", () => {
  const table = readme.split('## Running the forwarder')[1]!.split('\n\n').find((block) => block.startsWith('| variable'))!;

  it('names every variable lib/forwarder/config.ts reads, and none it does not', () => {
    const documented = firstColumnVariables(table);
    expect(documented.length).toBe(new Set(documented).size);
    expect([...documented].sort()).toEqual(Object.values(ENV_VARS).sort());
    for (const retired of Object.keys(RETIRED_ENV_VARS)) expect(documented).not.toContain(retired);
  });

  it('the check reads the table: a variable missing from it is found', () => {
    const shortened = table.split('\n').filter((line) => !line.includes('`VOLHOOK_LOG_LEVEL`')).join('\n');
    expect(Object.values(ENV_VARS).filter((v) => !firstColumnVariables(shortened).includes(v))).toEqual(['VOLHOOK_LOG_LEVEL']);
  });
});
