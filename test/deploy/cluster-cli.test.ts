/**
 * The cluster CLI round-trips with the backend: what it writes is what the registries read,
 * and the secret it prints is the one the app accepts — through add, rotation and removal.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DeleteParameterCommand, GetParameterCommand, ParameterNotFound, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/app/index.js';
import { runClusterCli, SHORT_USAGE, usageHint } from '../../lib/cli/index.js';
import type { Ec2Gateway } from '../../lib/ec2/index.js';
import { createFileRegistry, createSsmRegistry } from '../../lib/registry/index.js';
import { secretFingerprint } from '../../lib/contract/index.js';
import { createFileReportStore, VERIFIED_RECORD_INTERVAL_MS } from '../../lib/reports/index.js';
import { ROTATION_QUIET_MS } from '../../lib/cli/rotation-finish.js';
import { NOW_MS, SECRET_C1, signedRequest } from '../app/harness.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
let file: string;
beforeEach(() => {
  file = join(mkdtempSync(join(tmpdir(), 'volhook-cli-')), 'registry', 'clusters.json');
});

/** A fresh, empty directory of the backend's reports. */
const reportsDir = () => mkdtempSync(join(tmpdir(), 'volhook-reports-'));

async function cli(...argv: string[]) {
  return cliWith({}, ...argv);
}

async function cliWith(io: { generateSecret?: () => string }, ...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runClusterCli(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, ...io });
  return { code, stdout, stderr };
}

/** The value of `data.secret` in a printed Secret manifest. */
function secretIn(manifest: string): string {
  expect(manifest).toMatch(/^kind: Secret$/m);
  expect(manifest).toMatch(/^ {2}name: volhook-forwarder$/m);
  expect(manifest).toMatch(/^ {2}namespace: volhook-system$/m);
  const m = /^ {2}secret: (\S+)$/m.exec(manifest);
  expect(m).not.toBeNull();
  return Buffer.from(m![1]!, 'base64').toString('utf8');
}

const noEc2 = new Proxy({} as Ec2Gateway, {
  get: (_t, verb) => () => Promise.reject(new Error(`unexpected EC2 call ${String(verb)}`)),
});
const body = JSON.stringify({ clusterId: 'c1', items: [{ kind: 'PersistentVolumeClaimDeleted', uid: '0b7c9d52-7a3e-4f0e-9c61-3e2f8a4d5b16', namespace: 'default', name: 'data', pvExists: true }] });

/** Status of a request signed with `secret`, answered by an app reading the registry file now. */
async function statusWith(secret: string, clusterId = 'c1'): Promise<number> {
  const app = createApp({ registry: createFileRegistry(file), gatewayFor: () => noEc2, now: () => NOW_MS });
  const { path, ...init } = signedRequest(`/v1/clusters/${clusterId}/reconcile`, body, secret);
  return (await app.request(path, init)).status;
}

describe('cluster CLI with the local registry file', () => {
  it('add -> rotate-secret -> --finish -> remove: the backend follows each step', async () => {
    const added = await cli('add', 'c1', '--region', 'us-east-1', '--zones', 'us-east-1a,us-east-1b', '--types', 'gp3,io2', '--tag', 'team=storage', '--file', file);
    expect(added.code).toBe(0);
    const first = secretIn(added.stdout);
    expect(first).toMatch(/^whsec_/);
    expect(Buffer.from(first.slice(6), 'base64')).toHaveLength(32);
    expect(await statusWith(first)).toBe(200);

    const rotated = await cli('rotate-secret', 'c1', '--file', file);
    expect(rotated.code).toBe(0);
    const second = secretIn(rotated.stdout);
    expect(second).not.toBe(first);
    expect(await statusWith(first)).toBe(200);
    expect(await statusWith(second)).toBe(200);

    const finished = await cli('rotate-secret', 'c1', '--finish', '--file', file, '--reports-dir', reportsDir());
    expect(finished.code).toBe(0);
    expect(await statusWith(first)).toBe(401);
    expect(await statusWith(second)).toBe(200);

    const removed = await cli('remove', 'c1', '--file', file);
    expect(removed.code).toBe(0);
    expect(await statusWith(second)).toBe(404);
    expect((await cli('remove', 'c1', '--file', file)).code).toBe(1);
  });

  it('add -> the file holds what was asked, readable by its owner only', async () => {
    await cli('add', 'c1', '--region', 'eu-west-1', '--zones', 'eu-west-1a', '--max-size-gib', '500', '--tag', 'team=storage', '--file', file);
    const stored = JSON.parse(readFileSync(file, 'utf8')).clusters.c1;
    expect(stored).toMatchObject({ clusterId: 'c1', region: 'eu-west-1', allowedZones: ['eu-west-1a'], maxSizeGiB: 500, extraTags: { team: 'storage' } });
    expect(stored.secrets).toHaveLength(1);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('remove-old-secrets -> same as rotate-secret --finish', async () => {
    await cli('add', 'c1', '--region', 'us-east-1', '--file', file);
    const second = secretIn((await cli('rotate-secret', 'c1', '--file', file)).stdout);
    expect((await cli('remove-old-secrets', 'c1', '--file', file, '--reports-dir', reportsDir())).code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).clusters.c1.secrets).toEqual([second]);
  });

  it('the backend verifies a request -> it records the time under the fingerprint of the secret that signed it', async () => {
    const first = secretIn((await cli('add', 'c1', '--region', 'us-east-1', '--file', file)).stdout);
    await cli('rotate-secret', 'c1', '--file', file);
    const dir = reportsDir();
    const reports = createFileReportStore(dir);
    const app = createApp({ registry: createFileRegistry(file), gatewayFor: () => noEc2, now: () => NOW_MS, reports });
    const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', body, first);
    expect((await app.request(path, init)).status).toBe(200);
    expect(await reports.verifiedBy('c1')).toEqual({ [secretFingerprint(first)]: NOW_MS });
  });

  it('rotate-secret --finish while the backend verified a request with the old secret 30 s ago -> refused naming its fingerprint, nothing written; the control: last used 2,500 s ago (past the 2,400 s a forwarder at rest may be silent) -> finishes', async () => {
    const first = secretIn((await cli('add', 'c1', '--region', 'us-east-1', '--file', file)).stdout);
    const second = secretIn((await cli('rotate-secret', 'c1', '--file', file)).stdout);
    const dir = reportsDir();
    const reports = createFileReportStore(dir);
    await reports.verifiedWith('c1', secretFingerprint(second), Date.now() - 1000);
    await reports.verifiedWith('c1', secretFingerprint(first), Date.now() - 30_000);
    const before = readFileSync(file, 'utf8');

    const refused = await cli('rotate-secret', 'c1', '--finish', '--file', file, '--reports-dir', dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`refusing to remove the older secrets of cluster "c1"`);
    expect(refused.stderr).toContain(`${secretFingerprint(first)} at `);
    expect(refused.stderr).toMatch(/\(3\d s ago\)/);
    expect(refused.stderr).toContain(`volhook_forwarder_signing_secret_info{fingerprint="${secretFingerprint(second)}"}`);
    expect(readFileSync(file, 'utf8')).toBe(before);
    // remove-old-secrets is the same command.
    expect((await cli('remove-old-secrets', 'c1', '--file', file, '--reports-dir', dir)).code).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe(before);

    // No report store to read: refused too (the evidence is not known).
    const unknown = await cli('rotate-secret', 'c1', '--finish', '--file', file);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('--reports-table');
    expect(readFileSync(file, 'utf8')).toBe(before);

    const quiet = reportsDir();
    const quietStore = createFileReportStore(quiet);
    await quietStore.verifiedWith('c1', secretFingerprint(first), Date.now() - ROTATION_QUIET_MS - VERIFIED_RECORD_INTERVAL_MS - 40_000);
    await quietStore.verifiedWith('c1', secretFingerprint(second), Date.now() - 1000);
    const finished = await cli('rotate-secret', 'c1', '--finish', '--file', file, '--reports-dir', quiet);
    expect(finished.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).clusters.c1.secrets).toEqual([second]);
  });

  it('rotate-secret --reports-dir without --finish -> a usage error', async () => {
    await cli('add', 'c1', '--region', 'us-east-1', '--file', file);
    const out = await cli('rotate-secret', 'c1', '--file', file, '--reports-dir', reportsDir());
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('--reports-dir only applies with --finish');
  });

  it('add of a registered cluster -> exit 1, the registration is unchanged', async () => {
    await cli('add', 'c1', '--region', 'us-east-1', '--file', file);
    const before = readFileSync(file, 'utf8');
    const again = await cli('add', 'c1', '--region', 'us-east-1', '--file', file);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already registered/);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('show -> secrets redacted unless --show-secrets', async () => {
    const secret = secretIn((await cli('add', 'c1', '--region', 'us-east-1', '--file', file)).stdout);
    const shown = await cli('show', 'c1', '--file', file);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toContain(secret);
    expect(JSON.parse(shown.stdout).secrets).toEqual([`whsec_…${secret.slice(-4)}`]);
    expect(JSON.parse((await cli('show', 'c1', '--show-secrets', '--file', file)).stdout).secrets).toEqual([secret]);
  });

  it.each([
    [['add', 'c2', '--region', 'us-east-1', '--max-size-gib', '0'], '--max-size-gib'],
    [['add', 'c2', '--region', 'us-east-1', '--types', 'gp9'], '--types'],
    [['add', 'c2', '--region', 'us-east-1', '--zones', 'eu-west-1a'], '--zones'],
    [['add', 'c2', '--region', 'us-east-1', '--tag', 'kubernetes.io/cluster/x=owned'], '--tag'],
    [['add', 'c2', '--region', 'us-east-1', '--write-back', 'direct'], '--kube-server'],
    [['add', 'c2', '--region', 'us-east-1', '--kube-server', 'https://k8s.example'], '--kube-server'],
    [['add', 'c2', '--region', 'us-east-1', '--write-back', 'direct', '--kube-server', 'https://k8s.example', '--kube-token-file', '/nonexistent/token'], '--kube-token-file'],
    [['add', 'c2', '--region', 'moon-1'], '--region'],
    [['add', 'c2'], '--region'],
    [['add', 'C2_bad', '--region', 'us-east-1'], 'cluster id'],
    [['add', 'c2', '--region', 'us-east-1', '--ssm-path', '/volhook/dev/clusters/'], '--file and --ssm-path'],
    [['rotate-secret', 'c2', '--zones', 'us-east-1a'], '--zones'],
    [['remove', 'c2', '--force'], 'unknown option --force'],
    [['add', 'c2', '--region'], '--region needs a value'],
    [['add', 'c2', '--region', 'us-east-1', '--region', 'us-west-2'], '--region is given twice'],
    [['add', 'c2', '--region=us-east-1', '--tag='], '--tag needs a value'],
    [['rotate-secret', 'c2', '--finish=yes'], '--finish takes no value'],
    [['remove', 'c2', 'c3'], 'unexpected argument "c3"'],
    [['remove'], 'cluster id'],
    [['frobnicate', 'c2'], 'unknown command'],
  ])('%j -> exit 2 naming %s in one line and the command\'s short usage in another, nothing written', async (argv, named) => {
    await cli('add', 'c1', '--region', 'us-east-1', '--file', file);
    const before = readFileSync(file, 'utf8');
    const res = await cli(...(argv.length > 1 ? [...argv, '--file', file] : argv));
    expect(res.code).toBe(2);
    const [error, hint, ...more] = res.stderr.split('\n');
    expect(error).toMatch(/^error: /);
    expect(error).toContain(named);
    expect(hint).toBe(usageHint(argv));
    if (argv[0] === 'frobnicate') expect(hint).toBe(SHORT_USAGE);
    else expect(hint).toMatch(new RegExp(`^usage: npm run cluster -- ${argv[0]} <cluster-id> \\[--[^\\n]*; more: npm run cluster -- ${argv[0]} --help$`));
    expect(more).toEqual(['']);
    expect(res.stdout).toBe('');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});

describe('cluster CLI never writes a secret whose key is not 24–64 bytes', () => {
  // `whsec_` + characters that are not base64 decodes to zero bytes: an empty HMAC key.
  const unusable: Array<[string, string]> = [
    ['whsec_ + non-base64 (empty key)', 'whsec_!!!!!!!!!!!!!!!!!!!!!!!!'],
    ['whsec_ + 16 bytes', `whsec_${Buffer.alloc(16, 7).toString('base64')}`],
    ['whsec_ + 65 bytes', `whsec_${Buffer.alloc(65, 7).toString('base64')}`],
    ['raw 20 bytes', 'a-secret-of-20-bytes'],
  ];

  it.each(unusable)('add with a generated %s -> exit 2, nothing written', async (_name, secret) => {
    const res = await cliWith({ generateSecret: () => secret }, 'add', 'c1', '--region', 'us-east-1', '--file', file);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/refusing to register the new secret of cluster "c1"/);
    expect(res.stderr).not.toContain(secret);
    expect(res.stdout).toBe('');
    expect(() => statSync(file)).toThrow();
  });

  it('rotate-secret with a generated empty-key secret -> exit 2, the registration unchanged', async () => {
    await cli('add', 'c1', '--region', 'us-east-1', '--file', file);
    const before = readFileSync(file, 'utf8');
    const res = await cliWith({ generateSecret: () => 'whsec_%%%%' }, 'rotate-secret', 'c1', '--file', file);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('a registry file holding an empty-key secret -> the app answers 403 naming the cluster', async () => {
    await cli('add', 'c1', '--region', 'us-east-1', '--file', file);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    stored.clusters.c1.secrets = ['whsec_!!!!!!!!!!!!!!!!!!!!!!!!'];
    writeFileSync(file, JSON.stringify(stored));
    // rotate-secret refuses to build on it rather than carry it on.
    expect((await cli('rotate-secret', 'c1', '--file', file)).code).toBe(1);
    expect(await statusWith(SECRET_C1)).toBe(403);
  });
});

describe('cluster CLI with SSM Parameter Store', () => {
  const ssm = mockClient(SSMClient);
  const client = () => new SSMClient({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 's' } });
  const PATH = '/volhook/dev/clusters/';
  async function ssmCli(...argv: string[]) {
    let stdout = '';
    const code = await runClusterCli([...argv, '--ssm-path', PATH], { stdout: (t) => void (stdout += t), stderr: () => {}, env: {}, ssmClient: client });
    return { code, stdout };
  }
  beforeEach(() => ssm.reset());

  it('add -> a SecureString at <path><id> that the SSM registry reads back with the printed secret', async () => {
    ssm.on(PutParameterCommand).resolves({ Version: 1 });
    const { code, stdout } = await ssmCli('add', 'c1', '--region', 'us-east-1');
    expect(code).toBe(0);
    expect(ssm).toHaveReceivedCommandWith(PutParameterCommand, { Name: `${PATH}c1`, Type: 'SecureString', Overwrite: false });
    const value = ssm.commandCalls(PutParameterCommand)[0]!.args[0].input.Value!;

    ssm.on(GetParameterCommand, { Name: `${PATH}c1`, WithDecryption: true }).resolves({ Parameter: { Value: value } });
    const reg = await createSsmRegistry({ path: PATH, client: client() }).get('c1');
    expect(reg?.secrets).toEqual([secretIn(stdout)]);
  });

  it('rotate-secret -> overwrites with old and new secrets', async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: JSON.stringify({ clusterId: 'c1', secrets: ['whsec_b2xkLXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm'], region: 'us-east-1' }) } });
    ssm.on(PutParameterCommand).resolves({ Version: 2 });
    const { code, stdout } = await ssmCli('rotate-secret', 'c1');
    expect(code).toBe(0);
    const put = ssm.commandCalls(PutParameterCommand)[0]!.args[0].input;
    expect(put).toMatchObject({ Name: `${PATH}c1`, Overwrite: true, Type: 'SecureString' });
    expect(JSON.parse(put.Value!).secrets).toEqual(['whsec_b2xkLXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm', secretIn(stdout)]);
  });

  it('remove -> DeleteParameter; a missing parameter -> exit 1', async () => {
    ssm.on(DeleteParameterCommand).resolvesOnce({}).rejects(new ParameterNotFound({ message: '', $metadata: {} }));
    expect((await ssmCli('remove', 'c1')).code).toBe(0);
    expect(ssm).toHaveReceivedCommandWith(DeleteParameterCommand, { Name: `${PATH}c1` });
    expect((await ssmCli('remove', 'c1')).code).toBe(1);
  });
});

describe('bin/cluster.ts as a child process (npx tsx)', () => {
  const run = (...argv: string[]) =>
    promisify(execFile)('npx', ['tsx', 'bin/cluster.ts', ...argv], { cwd: repoRoot, env: { PATH: process.env.PATH, HOME: process.env.HOME } }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
    );

  it('add -> exit 0, the Secret on stdout; bad --max-size-gib -> exit 2 naming it, nothing written', async () => {
    const ok = await run('add', 'c3', '--region', 'eu-west-1', '--file', file);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain('registered cluster "c3"');
    expect(secretIn(ok.stdout)).toBe(JSON.parse(readFileSync(file, 'utf8')).clusters.c3.secrets[0]);

    const before = readFileSync(file, 'utf8');
    const bad = await run('add', 'c4', '--region', 'eu-west-1', '--max-size-gib', 'lots', '--file', file);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-size-gib');
    expect(bad.stdout).toBe('');
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(readdirSync(dirname(file))).toEqual(['clusters.json']);
  }, 60_000);

  it('--help -> the full usage, exit 0; add --help -> its own; no command -> one line, exit 2; a bad option -> two lines, exit 2', async () => {
    const full = await run('--help');
    expect(full.code).toBe(0);
    expect(full.stdout).toMatch(/^usage: npm run cluster -- <command> <cluster-id> \[options\]\n/);
    expect(full.stdout).toContain('  adopt <id>');

    const add = await run('add', '--help');
    expect(add.code).toBe(0);
    expect(add.stdout).toMatch(/^usage: npm run cluster -- add <cluster-id> \[options\]\n/);
    expect(add.stdout).toContain('--max-size-gib');
    expect(add.stdout).not.toContain('--delete-volumes');

    const none = await run();
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/^usage: npm run cluster -- <command> \[options\]; commands: add, [^\n]*; --help for more\n$/);

    const bad = await run('remove', 'c3', '--force', '--file', file);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe(
      'error: unknown option --force\n' +
        'usage: npm run cluster -- remove <cluster-id> [--delete-volumes] [--yes] [--region] [--reports-table] [--reports-dir] [--file] [--ssm-path] [--ssm-region]; more: npm run cluster -- remove --help\n',
    );
  }, 60_000);
});
