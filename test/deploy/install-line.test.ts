/**
 * The forwarder's install line (lib/cli/install-line.ts), and `cluster add` printing it: the
 * exact helm command for the cluster, its values surviving a POSIX shell and helm's `--set`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BACKEND_URL_PLACEHOLDER, helmInstallLine, shellQuote } from '../../lib/cli/index.js';
import { runCli } from './cli-run.js';

const run = promisify(execFile);

/** The words `sh` hands to `helm` when it runs `line`: what the shell makes of the quoting. */
async function wordsOf(line: string): Promise<string[]> {
  const { stdout } = await run('sh', ['-c', `helm() { printf '%s\\n' "$@"; }; ${line}`]);
  return stdout.split('\n').slice(0, -1);
}

async function cli(...argv: string[]) {
  return runCli(argv);
}

const URL_ = 'https://abc123.execute-api.eu-west-1.amazonaws.com';

describe('helmInstallLine', () => {
  it('a cluster and its backend URL -> the exact helm command, values bare', () => {
    expect(helmInstallLine({ clusterId: 'prod-eu-1', backendUrl: URL_, secretName: 'volhook-forwarder' })).toBe(
      `helm upgrade --install volhook-forwarder charts/volhook-forwarder -n volhook-system --create-namespace --set backendUrl=${URL_} --set clusterId=prod-eu-1 --set secret.existingSecret=volhook-forwarder`,
    );
  });

  it('no backend URL -> the placeholder, quoted, so the shell passes it as one word and it is no URL', async () => {
    const line = helmInstallLine({ clusterId: 'c1', secretName: 'volhook-forwarder' });
    expect(line).toContain(`--set 'backendUrl=${BACKEND_URL_PLACEHOLDER}'`);
    expect(await wordsOf(line)).toEqual([
      'upgrade', '--install', 'volhook-forwarder', 'charts/volhook-forwarder', '-n', 'volhook-system', '--create-namespace',
      '--set', `backendUrl=${BACKEND_URL_PLACEHOLDER}`, '--set', 'clusterId=c1', '--set', 'secret.existingSecret=volhook-forwarder',
    ]);
    expect(URL.canParse(BACKEND_URL_PLACEHOLDER)).toBe(false);
  });

  it("a value with shell and helm syntax (quote, space, $, comma, backslash) -> the shell hands helm --set's escaped form, nothing expanded", async () => {
    const backendUrl = "https://h.example/a b?x=1,y=$HOME&z='q'\\";
    const words = await wordsOf(helmInstallLine({ clusterId: 'c1', backendUrl, secretName: 'volhook-forwarder' }));
    // helm reads `\,` as a comma and `\\` as a backslash: the value it sets is the URL as given.
    expect(words[8]).toBe("backendUrl=https://h.example/a b?x=1\\,y=$HOME&z='q'\\\\");
    expect(words[8]!.slice('backendUrl='.length).replace(/\\(.)/g, '$1')).toBe(backendUrl);
  });

  it('a cluster id helm would read as a number -> --set-string, so the chart gets the string', async () => {
    const words = await wordsOf(helmInstallLine({ clusterId: '42', backendUrl: URL_, secretName: 'volhook-forwarder' }));
    expect(words.slice(9, 11)).toEqual(['--set-string', 'clusterId=42']);
  });

  it('shellQuote: plain words stay bare, anything else is single-quoted and read back exactly', async () => {
    expect(shellQuote('volhook-forwarder-secret.yaml')).toBe('volhook-forwarder-secret.yaml');
    for (const text of ["it's", 'a b', '$(rm -rf /)', '`x`', '"', '\\', '*', '~', '']) {
      const { stdout } = await run('sh', ['-c', `printf '%s' ${shellQuote(text)}`]);
      expect(stdout, text).toBe(text);
    }
  });
});

describe('cluster add prints the install steps', () => {
  it('--api-url given -> stderr: namespace, kubectl apply of the Secret, then the exact helm line; the Secret alone on stdout', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'volhook-install-')), 'clusters.json');
    const res = await cli('add', 'prod-eu-1', '--region', 'eu-west-1', '--api-url', URL_, '--file', file);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^# volhook: signing secret[^]*kind: Secret[^]*\n {2}secret: \S+\n$/);
    const steps = res.stderr.split('\n').map((l) => l.trim());
    const apply = steps.indexOf('kubectl apply -f volhook-forwarder-secret.yaml');
    const helm = steps.indexOf(helmInstallLine({ clusterId: 'prod-eu-1', backendUrl: URL_, secretName: 'volhook-forwarder' }));
    expect(steps.indexOf('kubectl create namespace volhook-system')).toBeGreaterThan(-1);
    expect(apply).toBeGreaterThan(steps.indexOf('kubectl create namespace volhook-system'));
    expect(helm).toBeGreaterThan(apply);
    expect(res.stderr).not.toContain(BACKEND_URL_PLACEHOLDER);
  });

  it('no --api-url -> the placeholder in the line and a note saying what to put there', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'volhook-install-')), 'clusters.json');
    const res = await cli('add', 'c1', '--region', 'us-east-1', '--file', file);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain(helmInstallLine({ clusterId: 'c1', secretName: 'volhook-forwarder' }));
    expect(res.stderr).toMatch(/replace <HttpApiUrl from osls info> with the HttpApiUrl that npx osls info prints \(or run add with --api-url <url>\)/);
  });

  it('--api-url that is no http(s) URL -> exit 2 naming it, nothing registered; the control with a good URL registers', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'volhook-install-')), 'clusters.json');
    for (const bad of ['abc123.execute-api.eu-west-1.amazonaws.com', 'ftp://h.example/']) {
      const res = await cli('add', 'c1', '--region', 'us-east-1', '--api-url', bad, '--file', file);
      expect(res.code).toBe(2);
      expect(res.stderr).toContain(`--api-url: "${bad}" is not an http(s) URL`);
      expect(res.stdout).toBe('');
      expect(existsSync(file)).toBe(false);
    }
    expect((await cli('add', 'c1', '--region', 'us-east-1', '--api-url', URL_, '--file', file)).code).toBe(0);
    expect(existsSync(file)).toBe(true);
  });
});
