import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { identityTags, isReservedTagKey, RESERVED_TAG_KEYS, RESERVED_TAG_KEYS_TEXT, TagKeys } from '../../lib/contract/index.js';

describe('isReservedTagKey', () => {
  it.each([
    { key: 'CSIVolumeName', reserved: true },
    { key: 'CSIVolumeSnapshotName', reserved: true },
    { key: 'kubernetes.io/cluster/x', reserved: true },
    { key: 'kubernetes.iox', reserved: true },
    { key: 'ebs.csi.aws.com/cluster', reserved: true },
    { key: 'ebs.csi.aws.com/anything', reserved: true },
    { key: 'AWS:foo', reserved: true },
    { key: 'CSIVolumeNameX', reserved: false },
    { key: 'Name', reserved: false },
    { key: 'ebs.csi.aws.com', reserved: false },
    { key: 'my.kubernetes.io/x', reserved: false },
    { key: 'team', reserved: false },
  ])('"$key" -> reserved $reserved', ({ key, reserved }) => {
    expect(isReservedTagKey(key)).toBe(reserved);
  });

  it('RESERVED_TAG_KEYS -> lists what ebs.md reserves', () => {
    expect(RESERVED_TAG_KEYS.exact).toContain('CSIVolumeName');
    expect(RESERVED_TAG_KEYS.prefixes).toEqual(expect.arrayContaining(['kubernetes.io', 'ebs.csi.aws.com/']));
  });
});

describe('tag vocabulary', () => {
  it('identityTags -> the name, the IAM scope and cluster ownership, keyed by TagKeys', () => {
    expect(identityTags('prod', 'pvc-1')).toEqual({
      [TagKeys.csiVolumeName]: 'pvc-1',
      [TagKeys.ebsCluster]: 'true',
      [TagKeys.cluster('prod')]: 'owned',
    });
    expect(identityTags('prod', 'pvc-1')).toEqual({ CSIVolumeName: 'pvc-1', 'ebs.csi.aws.com/cluster': 'true', 'kubernetes.io/cluster/prod': 'owned' });
  });

  it('every key volhook writes -> reserved, so no configuration can set or forge one', () => {
    const written = [TagKeys.csiVolumeName, TagKeys.ebsCluster, TagKeys.cluster('prod'), TagKeys.pvcName, TagKeys.pvcNamespace, TagKeys.pvName];
    expect(written.filter((key) => !isReservedTagKey(key))).toEqual([]);
  });

  it("the IAM policy scopes CreateVolume and the mutating calls to TagKeys.ebsCluster=true -> the key volhook writes", () => {
    const policy = readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8');
    expect(policy).toContain(`aws:RequestTag/${TagKeys.ebsCluster}: 'true'`);
    expect(policy).toContain(`aws:ResourceTag/${TagKeys.ebsCluster}: 'true'`);
  });

  it('RESERVED_TAG_KEYS_TEXT -> names every reserved key and prefix', () => {
    expect(RESERVED_TAG_KEYS_TEXT).toBe('CSIVolumeName, CSIVolumeSnapshotName, kubernetes.io*, ebs.csi.aws.com/*, volhook.io/*, aws:*');
  });
});
