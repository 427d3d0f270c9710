/**
 * `npm run bench:coldstart` builds the shipped bundle and prints, from one run, its size (what
 * a cold start loads, what waits behind import()), the import median of the function and of a
 * bare @aws-sdk/client-ec2 bundle with the same commands, and their ratio. Figures only: the
 * test checks that they are there and consistent, never how fast they are.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { parse } from 'yaml';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const runtime = (parse(readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8')) as { provider: { runtime: string } }).provider.runtime;
const major = /^nodejs(\d+)\.x$/.exec(runtime)![1];

it('npm run bench:coldstart -> sizes at import and lazy, function and baseline import medians, their ratio', async () => {
  const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'bench:coldstart', '--', '--runs', '3'], { cwd: repoRoot, timeout: 150_000 });
  expect(stdout).toMatch(new RegExp(`^bundle {2}functions/api\\.ts -> api\\.mjs \\(esm, node${major}, minify=true, splitting=true\\)$`, 'm'));
  const size = /^size {4}(\d+) KiB raw, (\d+) KiB gzip: api\.mjs and the \d+ chunks it imports \(loaded at import\)$/m.exec(stdout);
  expect(size).not.toBeNull();
  expect(Number(size![1])).toBeGreaterThan(Number(size![2]));
  const lazy = /^lazy {4}(\d+) KiB raw, \d+ KiB gzip in \d+ chunks loaded on first use$/m.exec(stdout);
  expect(lazy).not.toBeNull();
  const zip = /^zip {5}\d+ files, (\d+) KiB raw$/m.exec(stdout);
  expect(Math.abs(Number(zip![1]) - Number(size![1]) - Number(lazy![1]))).toBeLessThanOrEqual(1);

  // client-node waits behind import(): it is among the lazy parts, not among those loaded at import.
  const atImport = /^largest parts loaded at import:\n((?: {2}.+\n)+)/m.exec(stdout)![1]!;
  const lazyParts = /^largest lazy parts:\n((?: {2}.+\n)+)/m.exec(stdout)![1]!;
  expect(lazyParts).toContain('@kubernetes/client-node');
  expect(atImport).not.toContain('@kubernetes/client-node');

  // The baseline holds the gateway's commands, read from the function's own bundle.
  const baseline = /^baseline @aws-sdk\/client-ec2: EC2Client \+ (\d+) commands \((.+)\)$/m.exec(stdout);
  expect(baseline).not.toBeNull();
  const commands = baseline![2]!.split(', ');
  expect(commands).toHaveLength(Number(baseline![1]));
  expect(commands).toEqual(expect.arrayContaining(['AttachVolumeCommand', 'CreateVolumeCommand', 'DeleteVolumeCommand', 'DescribeVolumesCommand', 'DetachVolumeCommand']));

  const fn = new RegExp(`^import {2}median (\\d+) ms \\(min \\d+, max \\d+\\) over 3 fresh node v${major}\\.\\d+\\.\\d+ processes$`, 'm').exec(stdout);
  expect(fn).not.toBeNull();
  expect(stdout).toMatch(/^process median \d+ ms/m);
  const base = /^baseline import median (\d+) ms \(min \d+, max \d+\) over 3 fresh processes/m.exec(stdout);
  expect(base).not.toBeNull();
  const ratio = /^ratio {3}(\d+\.\d\d) \(function import median \/ baseline import median\)$/m.exec(stdout);
  expect(ratio).not.toBeNull();
  // Printed medians are rounded to whole ms; the ratio is of the unrounded ones.
  expect(Number(ratio![1])).toBeCloseTo(Number(fn![1]) / Number(base![1]), 1);
  expect(stdout).toMatch(/^cpu {5}function median \d+ ms, baseline median \d+ ms, ratio \d+\.\d\d$/m);
}, 160_000);
