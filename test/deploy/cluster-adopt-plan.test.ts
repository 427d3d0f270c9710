/** `cluster adopt`'s pure parts: which PVs are ours, and disk tags -> what adoption does. */
import { describe, expect, it } from 'vitest';
import { ebsVolumeId, planAdoption, planDisk, planSnapshots, planUnnamedDisks, pvDisks, PvFileSchema, type AdoptionStatus, type PvDisk } from '../../lib/cli/index.js';
import type { Disk, Snapshot } from '../../lib/ec2/index.js';

const VOL = 'vol-0123456789abcdef0';
const pv: PvDisk = { pv: 'pvc-1', source: 'csi', volumeId: VOL, given: VOL, claim: { namespace: 'shop', name: 'data' } };
const disk = (tags: Record<string, string>, state: Disk['state'] = 'available'): Disk => ({
  volumeId: VOL,
  zone: 'us-east-1a',
  sizeGiB: 10,
  state,
  type: 'gp3',
  encrypted: false,
  multiAttach: false,
  tags,
  attachments: [],
});
const csi = { CSIVolumeName: 'pvc-1', 'ebs.csi.aws.com/cluster': 'true' };
const createdFor = { 'kubernetes.io/created-for/pv/name': 'pvc-1', 'kubernetes.io/created-for/pvc/name': 'data', 'kubernetes.io/created-for/pvc/namespace': 'shop' };
const owned = { 'kubernetes.io/cluster/c1': 'owned' };
const clusterId = { 'volhook.io/cluster': 'c1' };
/** The tag AWS's cluster-scoped policy for the EBS CSI driver fences by: what a cluster handed back needs. */
const clusterName = { 'ebs.csi.aws.com/cluster-name': 'c1' };

describe('planDisk: disk tags -> what adoption does', () => {
  it.each<[string, Record<string, string>, AdoptionStatus, Record<string, string>, string?]>([
    ['CSI, chart default', { ...csi, ...createdFor }, 'tag', { ...owned, ...clusterId, ...clusterName }],
    ['CSI without --extra-create-metadata', csi, 'tag', { ...owned, ...clusterId, ...clusterName, ...createdFor }],
    ['in-tree made (no CSI tags)', { ...createdFor, Name: 'kubernetes-dynamic-pvc-1' }, 'tag', { ...owned, ...clusterId, ...clusterName, 'ebs.csi.aws.com/cluster': 'true', CSIVolumeName: 'pvc-1' }],
    ['owned, but outside the IAM scope (no ebs.csi.aws.com/cluster)', { ...owned, ...createdFor }, 'tag', { ...clusterId, ...clusterName, 'ebs.csi.aws.com/cluster': 'true', CSIVolumeName: 'pvc-1' }],
    ['owned by this cluster with every tag', { ...csi, ...owned, ...clusterId, ...clusterName }, 'adopted', {}],
    ['made by volhook before it wrote ebs.csi.aws.com/cluster-name', { ...csi, ...createdFor, ...owned, ...clusterId }, 'tag', clusterName],
    ['made by volhook before volumes carried volhook.io/cluster', { ...csi, ...createdFor, ...owned }, 'tag', { ...clusterId, ...clusterName }],
    ['--k8s-tag-cluster-id=c1', { ...csi, ...createdFor, ...owned, KubernetesCluster: 'c1', 'ebs.csi.aws.com/cluster-name': 'c1' }, 'tag', clusterId],
    ['--k8s-tag-cluster-id=c1, adopted', { ...csi, ...createdFor, ...owned, ...clusterId, KubernetesCluster: 'c1', 'ebs.csi.aws.com/cluster-name': 'c1' }, 'adopted', {}],
    ['only a case variant of volhook.io/cluster naming c1', { ...csi, ...createdFor, ...owned, 'Volhook.IO/Cluster': 'c1' }, 'tag', { ...clusterId, ...clusterName }],
    ['kubernetes.io/cluster/other=owned', { ...csi, 'kubernetes.io/cluster/other': 'owned' }, 'other-cluster', {}, 'tagged kubernetes.io/cluster/other=owned'],
    ['kubernetes.io/cluster/other=shared', { ...csi, 'kubernetes.io/cluster/other': 'shared' }, 'other-cluster', {}, 'tagged kubernetes.io/cluster/other=shared'],
    ['volhook.io/cluster=other', { ...csi, ...owned, 'volhook.io/cluster': 'other' }, 'other-cluster', {}, 'tagged volhook.io/cluster=other'],
    ['VOLHOOK.IO/CLUSTER=other beside volhook.io/cluster=c1', { ...csi, ...owned, ...clusterId, 'VOLHOOK.IO/CLUSTER': 'other' }, 'other-cluster', {}, 'tagged VOLHOOK.IO/CLUSTER=other'],
    ['ebs.csi.aws.com/cluster-name=other', { ...csi, 'ebs.csi.aws.com/cluster-name': 'other' }, 'other-cluster', {}, 'tagged ebs.csi.aws.com/cluster-name=other'],
    ['legacy KubernetesCluster=other', { ...createdFor, KubernetesCluster: 'other' }, 'other-cluster', {}, 'tagged KubernetesCluster=other'],
    ['kubernetes.io/cluster/c1=shared', { ...csi, 'kubernetes.io/cluster/c1': 'shared' }, 'conflict', {}],
    ['ebs.csi.aws.com/cluster=false', { 'ebs.csi.aws.com/cluster': 'false' }, 'conflict', {}],
    ['CSIVolumeName of another PV (static PV)', { ...csi, CSIVolumeName: 'pvc-9', ...createdFor }, 'tag', { ...owned, ...clusterId, ...clusterName }, 'CSIVolumeName is pvc-9 (kept)'],
  ])('%s -> %s', (_name, tags, status, added, detail) => {
    const plan = planDisk('c1', VOL, [pv], disk(tags));
    expect(plan).toMatchObject({ volumeId: VOL, pvs: ['pvc-1'], status });
    expect(plan.tags).toEqual(added);
    if (detail) expect(plan.detail).toContain(detail);
  });

  it.each([['deleting'], ['deleted']] as const)('volume %s -> not-found, nothing to tag', (state) => {
    expect(planDisk('c1', VOL, [pv], disk(csi, state))).toMatchObject({ status: 'not-found', tags: {} });
  });

  it('no such volume -> not-found', () => {
    expect(planDisk('c1', VOL, [pv], undefined)).toMatchObject({ status: 'not-found', detail: 'EC2 has no such volume' });
  });

  it('two PVs on one disk -> one row, cluster tags only', () => {
    const rows = planAdoption('c1', [pv, { ...pv, pv: 'static-copy' }], new Map([[VOL, disk({})]]));
    expect(rows).toEqual([
      { volumeId: VOL, pvs: ['pvc-1', 'static-copy'], status: 'tag', tags: { ...owned, ...clusterId, ...clusterName, 'ebs.csi.aws.com/cluster': 'true' }, detail: 'named by several PVs: cluster tags only' },
    ]);
  });
});

describe('the cluster\'s own disks and snapshots no PV names: adopt adds what volhook.io/cluster needs', () => {
  const listed = (id: string, tags: Record<string, string>): Disk => ({ ...disk(tags), volumeId: id });
  const current = { ...owned, ...clusterId, ...clusterName, 'ebs.csi.aws.com/cluster': 'true' };
  const { 'volhook.io/cluster': _tag, 'ebs.csi.aws.com/cluster-name': _name, ...preChange } = current;
  const { 'ebs.csi.aws.com/cluster-name': _unnamed, ...beforeClusterName } = current;

  it('planUnnamedDisks -> a row for each listed disk that needs adopting and no PV names, in volume ID order; none for one adopted, named, gone or another cluster\'s disk left out', () => {
    const rows = planUnnamedDisks(
      'c1',
      [
        listed('vol-0000000000000000b', { ...preChange, CSIVolumeName: 'pvc-b' }),
        listed('vol-0000000000000000a', { ...owned }),
        listed('vol-0000000000000000c', { ...current, CSIVolumeName: 'pvc-c' }),
        listed('vol-0000000000000000d', { ...preChange, CSIVolumeName: 'pvc-d' }),
        { ...listed('vol-0000000000000000e', preChange), state: 'deleting' },
        listed('vol-0000000000000000f', { ...current, 'volhook.io/cluster': 'c2' }),
        listed('vol-0000000000000000g', { ...current, 'ebs.csi.aws.com/cluster-name': 'c2' }),
      ],
      new Set(['vol-0000000000000000d']),
    );
    expect(rows).toEqual([
      { volumeId: 'vol-0000000000000000a', pvs: [], status: 'tag', tags: { ...clusterId, ...clusterName, 'ebs.csi.aws.com/cluster': 'true' }, detail: 'no PersistentVolume names it: cluster tags only' },
      { volumeId: 'vol-0000000000000000b', pvs: [], status: 'tag', tags: { ...clusterId, ...clusterName }, detail: 'no PersistentVolume names it: cluster tags only' },
      { volumeId: 'vol-0000000000000000f', pvs: [], status: 'other-cluster', tags: {}, detail: 'tagged volhook.io/cluster=c2' },
      { volumeId: 'vol-0000000000000000g', pvs: [], status: 'other-cluster', tags: {}, detail: 'tagged ebs.csi.aws.com/cluster-name=c2' },
    ]);
  });

  it('planSnapshots -> a row for each listed snapshot that needs adopting: the cluster tags it lacks; another cluster\'s by volhook.io/cluster left alone; a conflict never changed', () => {
    const snapshot = (id: string, tags: Record<string, string>): Snapshot => ({ snapshotId: id, volumeId: VOL, sizeGiB: 1, state: 'completed', startTime: '2026-01-01T00:00:00.000Z', encrypted: false, tags });
    expect(
      planSnapshots('c1', [
        snapshot('snap-00000000000000003', { ...current, 'volhook.io/cluster': 'c2' }),
        snapshot('snap-00000000000000001', { ...preChange, CSIVolumeSnapshotName: 'snapcontent-1' }),
        snapshot('snap-00000000000000002', current),
        snapshot('snap-00000000000000004', { ...owned }),
        snapshot('snap-00000000000000005', { ...owned, 'ebs.csi.aws.com/cluster': 'false' }),
        snapshot('snap-00000000000000006', beforeClusterName),
      ]),
    ).toEqual([
      { snapshotId: 'snap-00000000000000001', volumeId: VOL, status: 'tag', tags: { ...clusterId, ...clusterName } },
      { snapshotId: 'snap-00000000000000003', volumeId: VOL, status: 'other-cluster', tags: {}, detail: 'tagged volhook.io/cluster=c2' },
      { snapshotId: 'snap-00000000000000004', volumeId: VOL, status: 'tag', tags: { 'ebs.csi.aws.com/cluster': 'true', ...clusterId, ...clusterName } },
      { snapshotId: 'snap-00000000000000005', volumeId: VOL, status: 'conflict', tags: {}, detail: 'tagged ebs.csi.aws.com/cluster=false; adopt changes no tag that is set' },
      { snapshotId: 'snap-00000000000000006', volumeId: VOL, status: 'tag', tags: clusterName },
    ]);
  });
});

describe('which PVs are ours, and their disks', () => {
  it.each([
    ['vol-02399794d890f9375', 'vol-02399794d890f9375'],
    ['aws://us-west-2a/vol-02399794d890f9375', 'vol-02399794d890f9375'],
    ['aws:///vol-02399794d890f9375', 'vol-02399794d890f9375'],
    ['aws://us-west-2a/02399794d890f9375', undefined],
    ['aws://vol-02399794d890f9375', undefined],
    ['vol01', undefined],
  ])('volume ID %s -> %s', (given, expected) => {
    expect(ebsVolumeId(given)).toBe(expected);
  });

  it('a kubectl List -> CSI PVs of ebs.csi.aws.com and in-tree EBS PVs; other drivers counted, not ours', () => {
    const file = PvFileSchema.parse({
      kind: 'List',
      items: [
        { kind: 'PersistentVolume', metadata: { name: 'b' }, spec: { awsElasticBlockStore: { volumeID: `aws://us-east-1a/${VOL}` }, claimRef: { namespace: 'ns', name: 'c' } } },
        { kind: 'PersistentVolume', metadata: { name: 'a' }, spec: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: VOL } } },
        { kind: 'PersistentVolume', metadata: { name: 'efs' }, spec: { csi: { driver: 'efs.csi.aws.com', volumeHandle: 'fs-1' } } },
        { kind: 'PersistentVolume', metadata: { name: 'nfs' }, spec: { nfs: { server: 'x', path: '/' } } },
      ],
    });
    expect(pvDisks(file.items)).toEqual({
      ours: [
        { pv: 'a', source: 'csi', volumeId: VOL, given: VOL },
        { pv: 'b', source: 'in-tree', volumeId: VOL, given: `aws://us-east-1a/${VOL}`, claim: { namespace: 'ns', name: 'c' } },
      ],
      others: 2,
    });
  });

  it('one PV (kubectl get pv NAME -o json) -> read as a list of one', () => {
    const file = PvFileSchema.parse({ kind: 'PersistentVolume', metadata: { name: 'a' }, spec: { csi: { driver: 'ebs.csi.aws.com', volumeHandle: VOL } } });
    expect(file.items).toHaveLength(1);
  });
});
