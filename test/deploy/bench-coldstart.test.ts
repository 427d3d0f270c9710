/** `npm run bench:coldstart` builds the shipped bundle and prints its size and import time. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

it('npm run bench:coldstart -> prints raw and gzip size and the median import time', async () => {
  const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'bench:coldstart', '--', '--runs', '3'], { cwd: repoRoot, timeout: 150_000 });
  expect(stdout).toMatch(/^bundle {2}functions\/api\.ts -> api\.mjs \(esm, node20, minify=true\)$/m);
  const size = /^size {4}(\d+) KiB raw, (\d+) KiB gzip$/m.exec(stdout);
  expect(size).not.toBeNull();
  expect(Number(size![1])).toBeGreaterThan(Number(size![2]));
  expect(stdout).toMatch(/^largest parts:\n {2}.+KiB {2}\S+/m);
  expect(stdout).toMatch(/^import {2}median \d+ ms \(min \d+, max \d+\) over 3 fresh node v20\.\d+\.\d+ processes$/m);
  expect(stdout).toMatch(/^process median \d+ ms/m);
}, 160_000);
