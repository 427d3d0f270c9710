import { describe, expect, it } from 'vitest';
import { ec2RolePolicy } from '../../lib/iam/role-policy.js';
import { clusterTags, identityTags, isReservedTagKey, RESERVED_TAG_KEYS, RESERVED_TAG_KEYS_TEXT, SessionTagKeys, snapshotIdentityTags, TagKeys, tagOwnership, type TagOwnership } from '../../lib/contract/index.js';

describe('isReservedTagKey', () => {
  it.each([
    { key: 'CSIVolumeName', reserved: true },
    { key: 'CSIVolumeSnapshotName', reserved: true },
    { key: 'kubernetes.io/cluster/x', reserved: true },
    { key: 'kubernetes.iox', reserved: true },
    { key: 'ebs.csi.aws.com/cluster', reserved: true },
    { key: 'ebs.csi.aws.com/cluster-name', reserved: true },
    { key: 'EBS.CSI.AWS.COM/Cluster-Name', reserved: true },
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
  it('identityTags -> the name, the IAM scope, cluster ownership and the cluster id IAM compares, keyed by TagKeys', () => {
    expect(identityTags('prod', 'pvc-1')).toEqual({
      [TagKeys.csiVolumeName]: 'pvc-1',
      [TagKeys.ebsCluster]: 'true',
      [TagKeys.cluster('prod')]: 'owned',
      [TagKeys.volhookCluster]: 'prod',
      [TagKeys.ebsClusterName]: 'prod',
    });
    expect(identityTags('prod', 'pvc-1')).toEqual({ CSIVolumeName: 'pvc-1', 'ebs.csi.aws.com/cluster': 'true', 'kubernetes.io/cluster/prod': 'owned', 'volhook.io/cluster': 'prod', 'ebs.csi.aws.com/cluster-name': 'prod' });
  });

  it('snapshotIdentityTags -> the same, with the snapshot name', () => {
    expect(snapshotIdentityTags('prod', 'snapcontent-1')).toEqual({
      CSIVolumeSnapshotName: 'snapcontent-1',
      'ebs.csi.aws.com/cluster': 'true',
      'kubernetes.io/cluster/prod': 'owned',
      'volhook.io/cluster': 'prod',
      'ebs.csi.aws.com/cluster-name': 'prod',
    });
  });

  it('ebs.csi.aws.com/cluster-name -> written on what volhook creates, never required: a disk without it is still owned', () => {
    const { [TagKeys.ebsClusterName]: _name, ...without } = identityTags('prod', 'pvc-1');
    expect(tagOwnership(without, 'prod')).toEqual({ kind: 'owned' });
    expect(tagOwnership(identityTags('prod', 'pvc-1'), 'prod')).toEqual({ kind: 'owned' });
  });

  it('every key volhook writes -> reserved, so no configuration can set or forge one', () => {
    const written = [TagKeys.csiVolumeName, TagKeys.ebsCluster, TagKeys.ebsClusterName, TagKeys.cluster('prod'), TagKeys.volhookCluster, TagKeys.pvcName, TagKeys.pvcNamespace, TagKeys.pvName];
    expect(written.filter((key) => !isReservedTagKey(key))).toEqual([]);
  });

  it("the EC2 role's policy scopes CreateVolume and the mutating calls to TagKeys.ebsCluster=true and TagKeys.volhookCluster=<the session's cluster> -> the keys volhook writes", () => {
    const conditions = ec2RolePolicy().Statement.map((s) => s.Condition?.StringEquals ?? {});
    const create = conditions.find((c) => `aws:RequestTag/${TagKeys.ebsCluster}` in c);
    expect(create).toEqual({ [`aws:RequestTag/${TagKeys.ebsCluster}`]: 'true', [`aws:RequestTag/${TagKeys.volhookCluster}`]: `\${aws:PrincipalTag/${SessionTagKeys.cluster}}` });
    const existing = conditions.filter((c) => `aws:ResourceTag/${TagKeys.ebsCluster}` in c);
    expect(existing.length).toBeGreaterThan(0);
    for (const c of existing) expect(c[`aws:ResourceTag/${TagKeys.volhookCluster}`]).toBe(`\${aws:PrincipalTag/${SessionTagKeys.cluster}}`);
  });

  it('RESERVED_TAG_KEYS_TEXT -> names every reserved key and prefix', () => {
    expect(RESERVED_TAG_KEYS_TEXT).toBe('CSIVolumeName, CSIVolumeSnapshotName, kubernetes.io*, ebs.csi.aws.com/*, volhook.io/*, aws:*');
  });
});

describe('tagOwnership: what a disk\'s or snapshot\'s tags say about cluster c1', () => {
  const owned = { 'kubernetes.io/cluster/c1': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'c1' };
  const { 'volhook.io/cluster': _tag, ...preChange } = owned;
  it.each<[string, Record<string, string>, TagOwnership]>([
    ['every cluster tag (as volhook tags what it creates)', owned, { kind: 'owned' }],
    ['every cluster tag, with a name and others', { ...owned, CSIVolumeName: 'pvc-1', team: 'a' }, { kind: 'owned' }],
    ['made before volumes carried volhook.io/cluster', preChange, { kind: 'needs-adopt', lacks: { 'volhook.io/cluster': 'c1' } }],
    ['a CSI-driver disk with --k8s-tag-cluster-id (no volhook.io/cluster)', { ...preChange, KubernetesCluster: 'c1', 'ebs.csi.aws.com/cluster-name': 'c1' }, { kind: 'needs-adopt', lacks: { 'volhook.io/cluster': 'c1' } }],
    ['owned, outside the IAM scope and without the cluster id', { 'kubernetes.io/cluster/c1': 'owned' }, { kind: 'needs-adopt', lacks: { 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'c1' } }],
    ['owned and the cluster id, outside the IAM scope', { 'kubernetes.io/cluster/c1': 'owned', 'volhook.io/cluster': 'c1' }, { kind: 'needs-adopt', lacks: { 'ebs.csi.aws.com/cluster': 'true' } }],
    ['ebs.csi.aws.com/cluster=false', { ...owned, 'ebs.csi.aws.com/cluster': 'false' }, { kind: 'needs-adopt', lacks: { 'ebs.csi.aws.com/cluster': 'true' } }],
    ['only a case variant of volhook.io/cluster, with the id', { ...preChange, 'Volhook.IO/Cluster': 'c1' }, { kind: 'needs-adopt', lacks: { 'volhook.io/cluster': 'c1' } }],
    ['only a case variant of ebs.csi.aws.com/cluster', { 'kubernetes.io/cluster/c1': 'owned', 'EBS.CSI.AWS.COM/cluster': 'true', 'volhook.io/cluster': 'c1' }, { kind: 'needs-adopt', lacks: { 'ebs.csi.aws.com/cluster': 'true' } }],
    ['volhook.io/cluster of another cluster', { ...owned, 'volhook.io/cluster': 'c2' }, { kind: 'foreign', why: 'tagged volhook.io/cluster=c2' }],
    ['volhook.io/cluster of the id in another case', { ...owned, 'volhook.io/cluster': 'C1' }, { kind: 'foreign', why: 'tagged volhook.io/cluster=C1' }],
    ['a case variant naming another cluster beside the right one', { ...owned, 'VOLHOOK.IO/CLUSTER': 'c2' }, { kind: 'foreign', why: 'tagged VOLHOOK.IO/CLUSTER=c2' }],
    ['a case variant naming another cluster, no kubernetes tag', { 'volhook.io/Cluster': 'c2' }, { kind: 'foreign', why: 'tagged volhook.io/Cluster=c2' }],
    ['another cluster\'s (kubernetes.io/cluster/c2)', { 'kubernetes.io/cluster/c2': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'c2' }, { kind: 'foreign', why: 'tagged volhook.io/cluster=c2' }],
    ['the cluster id but no kubernetes.io/cluster/c1=owned', { 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'c1' }, { kind: 'foreign', why: 'not tagged kubernetes.io/cluster/c1=owned' }],
    ['kubernetes.io/cluster/c1=shared', { ...owned, 'kubernetes.io/cluster/c1': 'shared' }, { kind: 'foreign', why: 'not tagged kubernetes.io/cluster/c1=owned' }],
    ['a case variant of kubernetes.io/cluster/c1 only', { 'Kubernetes.io/cluster/c1': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'c1' }, { kind: 'foreign', why: 'not tagged kubernetes.io/cluster/c1=owned' }],
    ['no tags (any volume of the account)', {}, { kind: 'foreign', why: 'not tagged kubernetes.io/cluster/c1=owned' }],
  ])('%s -> %o', (_name, tags, expected) => {
    expect(tagOwnership(tags, 'c1')).toEqual(expected);
  });

  it('owned means exactly clusterTags: what adopt adds and identityTags carries', () => {
    expect(clusterTags('c1')).toEqual(owned);
    expect(tagOwnership(identityTags('c1', 'pvc-1'), 'c1')).toEqual({ kind: 'owned' });
    expect(tagOwnership(snapshotIdentityTags('c1', 'snapcontent-1'), 'c1')).toEqual({ kind: 'owned' });
    expect(tagOwnership(identityTags('c1', 'pvc-1'), 'c2')).toMatchObject({ kind: 'foreign' });
  });
});
