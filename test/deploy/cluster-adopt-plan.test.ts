/** `cluster adopt`'s pure parts: which PVs are ours, and disk tags -> what adoption does. */
import { describe, expect, it } from 'vitest';
import { ebsVolumeId, planAdoption, planDisk, pvDisks, PvFileSchema, type AdoptionStatus, type PvDisk } from '../../lib/cli/index.js';
import type { Disk } from '../../lib/ec2/index.js';

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

describe('planDisk: disk tags -> what adoption does', () => {
  it.each<[string, Record<string, string>, AdoptionStatus, Record<string, string>, string?]>([
    ['CSI, chart default', { ...csi, ...createdFor }, 'tag', owned],
    ['CSI without --extra-create-metadata', csi, 'tag', { ...owned, ...createdFor }],
    ['in-tree made (no CSI tags)', { ...createdFor, Name: 'kubernetes-dynamic-pvc-1' }, 'tag', { ...owned, 'ebs.csi.aws.com/cluster': 'true', CSIVolumeName: 'pvc-1' }],
    ['owned, but outside the IAM scope (no ebs.csi.aws.com/cluster)', { ...owned, ...createdFor }, 'tag', { 'ebs.csi.aws.com/cluster': 'true', CSIVolumeName: 'pvc-1' }],
    ['owned by this cluster with every tag', { ...csi, ...owned }, 'adopted', {}],
    ['--k8s-tag-cluster-id=c1', { ...csi, ...createdFor, ...owned, KubernetesCluster: 'c1', 'ebs.csi.aws.com/cluster-name': 'c1' }, 'adopted', {}],
    ['kubernetes.io/cluster/other=owned', { ...csi, 'kubernetes.io/cluster/other': 'owned' }, 'other-cluster', {}, 'tagged kubernetes.io/cluster/other=owned'],
    ['kubernetes.io/cluster/other=shared', { ...csi, 'kubernetes.io/cluster/other': 'shared' }, 'other-cluster', {}, 'tagged kubernetes.io/cluster/other=shared'],
    ['ebs.csi.aws.com/cluster-name=other', { ...csi, 'ebs.csi.aws.com/cluster-name': 'other' }, 'other-cluster', {}, 'tagged ebs.csi.aws.com/cluster-name=other'],
    ['legacy KubernetesCluster=other', { ...createdFor, KubernetesCluster: 'other' }, 'other-cluster', {}, 'tagged KubernetesCluster=other'],
    ['kubernetes.io/cluster/c1=shared', { ...csi, 'kubernetes.io/cluster/c1': 'shared' }, 'conflict', {}],
    ['ebs.csi.aws.com/cluster=false', { 'ebs.csi.aws.com/cluster': 'false' }, 'conflict', {}],
    ['CSIVolumeName of another PV (static PV)', { ...csi, CSIVolumeName: 'pvc-9', ...createdFor }, 'tag', owned, 'CSIVolumeName is pvc-9 (kept)'],
  ])('%s -> %s', (_name, tags, status, added, detail) => {
    const plan = planDisk('c1', VOL, [pv], disk(tags));
    expect(plan).toMatchObject({ volumeId: VOL, pvs: ['pvc-1'], status, tags: added });
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
      { volumeId: VOL, pvs: ['pvc-1', 'static-copy'], status: 'tag', tags: { ...owned, 'ebs.csi.aws.com/cluster': 'true' }, detail: 'named by several PVs: cluster tags only' },
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
