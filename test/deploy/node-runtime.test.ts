/**
 * One Node major everywhere: the Lambda runtime in serverless.yml, the esbuild target of its
 * bundle, `engines`, the `node` devDependency that npm scripts run on (a machine whose system
 * Node is older still runs `npm test` on it), and the Node running these tests and the
 * processes they start. A suite run on another major fails here, saying which.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const serverless = parse(read('serverless.yml')) as { provider: { runtime: string }; custom: { esbuild: { target: string } } };
const pkg = JSON.parse(read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string }> };

const runtimeMajor = Number(/^nodejs(\d+)\.x$/.exec(serverless.provider.runtime)?.[1]);
const majorOf = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

describe('the Node major', () => {
  it('serverless.yml runs a nodejs<major>.x runtime Lambda supports and bundles for that major', () => {
    expect(serverless.provider.runtime).toMatch(/^nodejs(22|24)\.x$/);
    expect(serverless.custom.esbuild.target).toBe(`node${runtimeMajor}`);
  });

  it('engines and the node devDependency (pinned by the lockfile) are that major', () => {
    expect(pkg.engines.node).toBe(`${runtimeMajor}.x`);
    expect(pkg.devDependencies.node).toMatch(new RegExp(`^\\^${runtimeMajor}\\.`));
    expect(majorOf(lock.packages['node_modules/node']!.version!)).toBe(runtimeMajor);
  });

  it('the Node running the tests is the Lambda runtime major', () => {
    expect(
      majorOf(process.versions.node),
      `tests run on Node ${process.versions.node} (${process.execPath}) but serverless.yml deploys ${serverless.provider.runtime}: run them through npm (npm test), which puts node_modules/.bin/node first`,
    ).toBe(runtimeMajor);
  });

  it('a `node` the tests start by name (e2e subprocesses, tsx and osls shebangs) is that major too', async () => {
    const { stdout } = await promisify(execFile)('node', ['-p', 'process.versions.node'], { env: process.env });
    expect(majorOf(stdout.trim())).toBe(runtimeMajor);
  });
});
