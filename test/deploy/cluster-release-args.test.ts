/**
 * `cluster release`'s arguments: a bad one is named, exits 2, and nothing is read from the
 * cluster or the registry, nor written. The control: good arguments do reach the API server.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../lib/http/index.js';
import { operatorKubeconfig } from '../e2e/support/kube.js';
import { runCli } from './cli-run.js';

let server: Server;
let close: () => Promise<void>;
let requests = 0;
let dir: string;
let kubeconfig: string;
let registry: string;

async function cli(...argv: string[]) {
  return runCli(argv);
}

beforeAll(async () => {
  // An API server that answers every request 500 and counts it.
  server = createServer((_req, res) => {
    requests++;
    res.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ kind: 'Status', status: 'Failure', message: 'boom', code: 500 }));
  });
  let port: number;
  ({ port, close } = await listen(server, 0, '127.0.0.1'));
  dir = mkdtempSync(join(tmpdir(), 'volhook-release-args-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    operatorKubeconfig(`http://127.0.0.1:${port}`),
  );
  registry = join(dir, 'clusters.json');
  expect((await cli('add', 'c1', '--region', 'us-east-1', '--file', registry)).code).toBe(0);
});
afterAll(async () => close?.());

describe('cluster release arguments', () => {
  it.each<[string, string[], RegExp]>([
    ['no cluster id', ['release'], /release needs a cluster id/],
    ['a bad cluster id', ['release', 'C_1'], /cluster id "C_1"/],
    ['an unreadable --kubeconfig', ['release', 'c1', '--kubeconfig', '/nonexistent/kubeconfig'], /--kubeconfig: cannot load it/],
    ['a --context the kubeconfig lacks', ['release', 'c1', '--context', 'nope'], /--context: no context "nope"/],
    ["adopt's --pvs", ['release', 'c1', '--pvs', 'pvs.json'], /--pvs does not apply to release \(only to adopt\)/],
    ['--region', ['release', 'c1', '--region', 'us-east-1'], /--region does not apply to release/],
    ['a value for --apply', ['release', 'c1', '--apply=yes'], /--apply takes no value/],
    ['two cluster ids', ['release', 'c1', 'c2'], /unexpected argument "c2"/],
  ])('%s -> exit 2 naming it; no request to the API server, the registry unchanged', async (_what, argv, message) => {
    const before = readFileSync(registry, 'utf8');
    const seen = requests;
    const withConfig = argv.includes('--kubeconfig') ? argv : [...argv, '--kubeconfig', kubeconfig];
    const res = await cli(...withConfig, '--file', registry, '--apply');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stderr).toContain('; more: npm run cluster -- release --help');
    expect(res.stdout).toBe('');
    expect(requests).toBe(seen);
    expect(readFileSync(registry, 'utf8')).toBe(before);
  });

  it('good arguments, the cluster unreadable -> exit 1 saying nothing was changed; the API server was asked; the registry unchanged', async () => {
    const before = readFileSync(registry, 'utf8');
    const seen = requests;
    const res = await cli('release', 'c1', '--kubeconfig', kubeconfig, '--file', registry, '--apply');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: reading the cluster at http:\/\/127\.0\.0\.1:\d+: .*; nothing was changed\n$/);
    expect(requests).toBeGreaterThan(seen);
    expect(readFileSync(registry, 'utf8')).toBe(before);
  });
});
