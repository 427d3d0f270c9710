import { describe, expect, it } from 'vitest';
import { parseClusterArgs, UsageError } from '../../lib/cli/index.js';
import { parseDuration } from '../../lib/cli/args.js';

describe('cluster audit / remove --delete-volumes arguments', () => {
  it('audit <id> -> the default registry file, not given explicitly (a running local stack may be used), no deletion', () => {
    expect(parseClusterArgs(['audit', 'local'])).toEqual({ command: 'audit', clusterId: 'local', target: { kind: 'file', path: '.volhook/clusters.json' }, targetGiven: false, delete: false, deleteSnapshots: false, json: false });
  });

  it('audit with every option -> each read', () => {
    expect(parseClusterArgs(['audit', 'c1', '--ssm-path', '/volhook/prod/clusters', '--reports-table', 'volhook-prod-reports', '--grace', '1h30m', '--delete', '--delete-snapshots', '--json', '--region', 'eu-west-1'])).toEqual({
      command: 'audit',
      clusterId: 'c1',
      target: { kind: 'ssm', path: '/volhook/prod/clusters/' },
      targetGiven: true,
      region: 'eu-west-1',
      reports: { kind: 'table', name: 'volhook-prod-reports' },
      graceMs: 5_400_000,
      delete: true,
      deleteSnapshots: true,
      json: true,
    });
  });

  it.each([
    ['0s', 0],
    ['90s', 90_000],
    ['30m', 1_800_000],
    ['2d', 172_800_000],
    ['1h0m5s', 3_605_000],
  ])('--grace %s -> %d ms', (value, ms) => expect(parseDuration('--grace', value)).toBe(ms));

  it.each(['', '1', '1x', '-5m', '1.5h', 'h'])('--grace "%s" -> refused, naming the option', (value) => {
    expect(() => parseDuration('--grace', value)).toThrow(/--grace: ".*" is not a duration/);
  });

  it('remove --delete-volumes --yes -> both read; --yes without --delete-volumes -> refused; --delete on remove -> refused', () => {
    expect(parseClusterArgs(['remove', 'c1', '--delete-volumes', '--yes'])).toMatchObject({ command: 'remove', deleteVolumes: true, yes: true });
    expect(parseClusterArgs(['remove', 'c1'])).toMatchObject({ command: 'remove', deleteVolumes: false, yes: false });
    expect(() => parseClusterArgs(['remove', 'c1', '--yes'])).toThrow(/--yes only applies with --delete-volumes/);
    expect(() => parseClusterArgs(['remove', 'c1', '--delete'])).toThrow(UsageError);
  });

  it('--volume and --snapshot, repeatable -> the IDs to delete (only these); without --delete / --delete-snapshots, or not an EC2 ID -> refused', () => {
    expect(parseClusterArgs(['audit', 'c1', '--delete', '--volume', 'vol-0123456789abcdef0', '--volume', 'vol-0fedcba9876543210', '--volume', 'vol-0123456789abcdef0'])).toMatchObject({
      delete: true,
      volumes: ['vol-0123456789abcdef0', 'vol-0fedcba9876543210'],
    });
    expect(parseClusterArgs(['audit', 'c1', '--delete-snapshots', '--snapshot', 'snap-0123456789abcdef0'])).toMatchObject({ deleteSnapshots: true, snapshots: ['snap-0123456789abcdef0'] });
    expect(parseClusterArgs(['audit', 'c1', '--delete'])).not.toHaveProperty('volumes');
    expect(() => parseClusterArgs(['audit', 'c1', '--volume', 'vol-0123456789abcdef0'])).toThrow('--volume only applies with --delete');
    expect(() => parseClusterArgs(['audit', 'c1', '--delete', '--snapshot', 'snap-0123456789abcdef0'])).toThrow('--snapshot only applies with --delete-snapshots');
    expect(() => parseClusterArgs(['audit', 'c1', '--delete', '--volume', 'pvc-1'])).toThrow('--volume "pvc-1": not an EC2 volume ID');
    expect(() => parseClusterArgs(['audit', 'c1', '--delete-snapshots', '--snapshot', 'vol-0123456789abcdef0'])).toThrow('not an EC2 snapshot ID');
    expect(() => parseClusterArgs(['remove', 'c1', '--delete-volumes', '--volume', 'vol-0123456789abcdef0'])).toThrow('--volume does not apply to remove');
  });

  it('--reports-table and --reports-dir together -> refused', () => {
    expect(() => parseClusterArgs(['audit', 'c1', '--reports-table', 't', '--reports-dir', 'd'])).toThrow(/exclude each other/);
  });
});
