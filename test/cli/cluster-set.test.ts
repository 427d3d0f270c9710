/**
 * `cluster set`: a registration's limits, zones, types, tags and audit settings changed as `add`
 * checks them, shown as a diff, written in one replace of the whole registration with its
 * secrets as they were; a refused change writes nothing, nor does a registration that changed
 * while set ran.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../deploy/cli-run.js';

let file: string;
const registry = () => JSON.parse(readFileSync(file, 'utf8')) as { clusters: Record<string, Record<string, unknown>> };
const set = (...argv: string[]) => runCli(['set', 'c1', ...argv, '--file', file]);

beforeEach(async () => {
  file = join(mkdtempSync(join(tmpdir(), 'volhook-set-')), 'clusters.json');
  const added = await runCli(['add', 'c1', '--region', 'eu-west-1', '--zones', 'eu-west-1a', '--max-size-gib', '1024', '--tag', 'team=storage', '--file', file]);
  expect(added.code).toBe(0);
});

describe('cluster set', () => {
  it('a valid change -> the diff on stdout, the registration changed, its secrets and every other field as they were', async () => {
    const before = registry().clusters.c1!;
    const res = await set('--max-size-gib', '4096', '--zones', 'eu-west-1a,eu-west-1b', '--types', 'gp3', '--tag', 'team=db', '--tag', 'cost=42', '--audit-delete-orphans', 'true', '--audit-grace-seconds', '7200');
    expect(res.stderr).toContain('updated cluster "c1"');
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n').filter(Boolean)).toEqual([
      'maxSizeGiB: 1024 -> 4096',
      'allowedZones: ["eu-west-1a"] -> ["eu-west-1a","eu-west-1b"]',
      'allowedVolumeTypes: (unset) -> ["gp3"]',
      'extraTags: {"team":"storage"} -> {"team":"db","cost":"42"}',
      'audit: (unset) -> {"deleteOrphans":true,"graceSeconds":7200}',
    ]);
    const after = registry().clusters.c1!;
    expect(after).toEqual({
      ...before,
      maxSizeGiB: 4096,
      allowedZones: ['eu-west-1a', 'eu-west-1b'],
      allowedVolumeTypes: ['gp3'],
      extraTags: { team: 'db', cost: '42' },
      audit: { deleteOrphans: true, graceSeconds: 7200 },
    });
    expect(after.secrets).toEqual(before.secrets);
    // Audit settings merge: one changed, the others kept.
    expect((await set('--audit-delete-orphans', 'false')).code).toBe(0);
    expect(registry().clusters.c1!.audit).toEqual({ deleteOrphans: false, graceSeconds: 7200 });
    expect((await set('--zones', 'any', '--no-tags')).code).toBe(0);
    expect(registry().clusters.c1).toMatchObject({ allowedZones: [], extraTags: {} });
  });

  it('refused changes -> the reason, nothing written (the file byte for byte)', async () => {
    const before = readFileSync(file, 'utf8');
    const cases: Array<[string[], number, RegExp]> = [
      [['--zones', 'us-east-1a'], 1, /--zones: "us-east-1a" is not a zone of eu-west-1 \(the registration's region\); nothing written/],
      [['--max-size-gib', '0'], 2, /--max-size-gib: "0" is not a whole number/],
      [['--types', 'gp9'], 2, /--types: "gp9" is not one of/],
      [['--tag', 'kubernetes.io/cluster/x=owned'], 2, /--tag: "kubernetes\.io\/cluster\/x" is reserved/],
      [['--audit-delete-orphans', 'yes'], 2, /--audit-delete-orphans: "yes" is neither true nor false/],
      [['--tag', 'a=b', '--no-tags'], 2, /--tag and --no-tags exclude each other/],
      [[], 2, /set needs at least one of --max-size-gib/],
      [['--region', 'us-east-1'], 2, /--region/],
    ];
    for (const [argv, code, message] of cases) {
      const res = await set(...argv);
      expect(res.code, argv.join(' ')).toBe(code);
      expect(res.stderr, argv.join(' ')).toMatch(message);
      expect(res.stdout).toBe('');
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
    // Control: the same file takes a valid change.
    expect((await set('--max-size-gib', '2048')).code).toBe(0);
    expect(readFileSync(file, 'utf8')).not.toBe(before);
  });

  it('--dry-run -> the diff, nothing written; the settings it already has -> nothing written', async () => {
    const before = readFileSync(file, 'utf8');
    const dry = await set('--max-size-gib', '2048', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe('maxSizeGiB: 1024 -> 2048\n');
    expect(readFileSync(file, 'utf8')).toBe(before);
    const same = await set('--max-size-gib', '1024');
    expect(same.code).toBe(0);
    expect(same.stderr).toContain('already has these settings');
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('an unregistered cluster -> exit 1, nothing written', async () => {
    const res = await runCli(['set', 'c9', '--max-size-gib', '10', '--file', file]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cluster "c9" is not registered/);
  });
});

describe('cluster set against SSM', () => {
  const ssm = mockClient(SSMClient);
  const PATH = '/volhook/prod/clusters/';
  const SECRET = 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=';
  const NEW_SECRET = 'whsec_ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=';
  const stored = (secrets: string[]) => ({ Parameter: { Name: `${PATH}c1`, Type: 'SecureString' as const, Value: JSON.stringify({ clusterId: 'c1', secrets, region: 'eu-west-1', maxSizeGiB: 1024 }), Version: 1 } });
  const io = { ssmClient: () => new SSMClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 's' } }) };
  const setSsm = () => runCli(['set', 'c1', '--max-size-gib', '4096', '--ssm-path', PATH, '--ssm-region', 'eu-west-1'], io);

  beforeEach(() => ssm.reset());

  it('one PutParameter (overwrite) of the whole registration, its secrets exactly as read', async () => {
    ssm.on(GetParameterCommand).resolves(stored([SECRET, NEW_SECRET]));
    ssm.on(PutParameterCommand).resolves({ Version: 2 });
    const res = await setSsm();
    expect(res.stderr).toContain('secrets unchanged');
    expect(res.code).toBe(0);
    const puts = ssm.commandCalls(PutParameterCommand);
    expect(puts).toHaveLength(1);
    expect(puts[0]!.args[0].input).toMatchObject({ Name: `${PATH}c1`, Overwrite: true, Type: 'SecureString' });
    expect(JSON.parse(puts[0]!.args[0].input.Value!)).toEqual({ clusterId: 'c1', secrets: [SECRET, NEW_SECRET], region: 'eu-west-1', maxSizeGiB: 4096 });
  });

  it('the registration changed between the read and the write (a rotation) -> refused, nothing written', async () => {
    ssm.on(GetParameterCommand).resolvesOnce(stored([SECRET])).resolves(stored([SECRET, NEW_SECRET]));
    const res = await setSsm();
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/changed while this ran .* nothing written/);
    expect(ssm.commandCalls(PutParameterCommand)).toHaveLength(0);
  });
});
