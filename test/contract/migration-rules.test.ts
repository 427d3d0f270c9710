/**
 * Which PVs and claims are ours under CSI migration, as the reference stack decides:
 * external-provisioner's `isProvisionerForVolume` (known provisioners `ebs.csi.aws.com` and
 * `kubernetes.io/aws-ebs`), external-attacher's interest in every in-tree EBS PV, and
 * external-provisioner's claim check (storage-provisioner annotation or `migrated-to`).
 */
import { describe, expect, it } from 'vitest';
import {
  isClaimFor,
  isDynamicallyOurs,
  isOurVolume,
  isReclaimedByUs,
  PersistentVolumeSchema,
  type VolumeLike,
} from '../../lib/contract/index.js';

const ownership = { provisioner: 'ebs.csi.aws.com', driver: 'ebs.csi.aws.com' };
const IN_TREE = { awsElasticBlockStore: { volumeID: 'aws://us-east-1a/vol-0123456789abcdef0' } };
const CSI = { csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-0123456789abcdef0' } };

const pv = (annotations: Record<string, string>, source: object): VolumeLike => ({ metadata: { annotations }, spec: { ...source } });

describe('PVs under CSI migration: sent (isOurVolume), given the provisioner finalizer (isDynamicallyOurs), disk deleted (isReclaimedByUs)', () => {
  it.each([
    { name: 'migrated provisioning: provisioned-by kubernetes.io/aws-ebs, in-tree source', volume: pv({ 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs' }, IN_TREE), ours: true, dynamic: true, reclaimed: true },
    {
      name: 'in-tree plugin\'s PV after the PV controller marked it: provisioned-by aws-ebs + migrated-to',
      volume: pv({ 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs', 'pv.kubernetes.io/migrated-to': 'ebs.csi.aws.com' }, IN_TREE),
      ours: true,
      dynamic: true,
      reclaimed: true,
    },
    { name: 'migrated-to our driver only', volume: pv({ 'pv.kubernetes.io/migrated-to': 'ebs.csi.aws.com' }, IN_TREE), ours: true, dynamic: true, reclaimed: true },
    { name: 'static in-tree PV (no provisioned-by, no migrated-to) -> attached, never deleted', volume: pv({}, IN_TREE), ours: true, dynamic: false, reclaimed: false },
    { name: 'native: provisioned-by ebs.csi.aws.com, CSI source', volume: pv({ 'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com' }, CSI), ours: true, dynamic: true, reclaimed: true },
    { name: 'static CSI PV of our driver', volume: pv({}, CSI), ours: true, dynamic: false, reclaimed: true },
    {
      name: 'another provisioner\'s PV naming our driver -> attached, not deleted (as upstream)',
      volume: pv({ 'pv.kubernetes.io/provisioned-by': 'example.com/ebs' }, CSI),
      ours: true,
      dynamic: false,
      reclaimed: false,
    },
    {
      name: 'another in-tree plugin\'s PV (kubernetes.io/gce-pd)',
      volume: pv({ 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/gce-pd' }, { gcePersistentDisk: { pdName: 'x' } }),
      ours: false,
      dynamic: false,
      reclaimed: false,
    },
    { name: 'an NFS PV', volume: pv({}, { nfs: { server: 'x', path: '/' } }), ours: false, dynamic: false, reclaimed: false },
  ])('$name', ({ volume, ours, dynamic, reclaimed }) => {
    expect(isOurVolume(volume, ownership)).toBe(ours);
    expect(isDynamicallyOurs(volume, ownership)).toBe(dynamic);
    expect(isReclaimedByUs(volume, ownership)).toBe(reclaimed);
  });

  it('the same rule over the contract\'s parsed PV', () => {
    const parsed = PersistentVolumeSchema.parse({
      metadata: { name: 'pv', uid: 'u', annotations: { 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs' } },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], ...IN_TREE },
    });
    expect(isOurVolume(parsed, ownership)).toBe(true);
    expect(isReclaimedByUs(parsed, ownership)).toBe(true);
  });

  it('a volhook configured with another provisioner name -> in-tree PVs are not its', () => {
    const other = { provisioner: 'example.com/ebs', driver: 'example.com/ebs' };
    expect(isOurVolume(pv({ 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs' }, IN_TREE), other)).toBe(false);
  });
});

describe('claims: the storage-provisioner annotation, or migrated-to (external-provisioner\'s check)', () => {
  const claim = (annotations: Record<string, string>) => ({ metadata: { annotations } });
  it.each([
    ['annotated ebs.csi.aws.com (the PV controller\'s hand-over of an in-tree class claim)', { 'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com' }, true],
    ['beta annotation only', { 'volume.beta.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com' }, true],
    ['annotated kubernetes.io/aws-ebs and migrated-to ebs.csi.aws.com', { 'volume.kubernetes.io/storage-provisioner': 'kubernetes.io/aws-ebs', 'pv.kubernetes.io/migrated-to': 'ebs.csi.aws.com' }, true],
    ['annotated kubernetes.io/aws-ebs, not migrated', { 'volume.kubernetes.io/storage-provisioner': 'kubernetes.io/aws-ebs' }, false],
    ['migrated-to another driver', { 'volume.kubernetes.io/storage-provisioner': 'kubernetes.io/aws-ebs', 'pv.kubernetes.io/migrated-to': 'foo' }, false],
  ])('%s -> %s', (_name, annotations, expected) => {
    expect(isClaimFor(claim(annotations), 'ebs.csi.aws.com')).toBe(expected);
  });
});
