/**
 * The local cluster's side of CSI migration, as kube-controller-manager does it for the
 * in-tree `kubernetes.io/aws-ebs` plugin: the PV controller's `migrated-to` bookkeeping and
 * standing down from migrated PVs' reclaim; the attach/detach controller and kubelet naming
 * an in-tree PV's VolumeAttachment from its translated volume ID.
 */
import { describe, expect, it } from 'vitest';
import { attachmentName, planNodeAttachments, podStartup, syncClaim, syncVolume } from '../../../lib/local/controllers/index.js';
import type { PersistentVolume } from '../../../lib/local/controllers/index.js';
import { attachment, boundPair, claim, pod, storageClass } from './fixtures.js';

const DRIVER = 'ebs.csi.aws.com';
const MIGRATED_TO = 'pv.kubernetes.io/migrated-to';
const VOL = 'vol-0123456789abcdef0';

/** An in-tree PV bound to claim `c`: awsElasticBlockStore, no csi. */
function inTree(volumeID: string, annotations?: Record<string, string>, o: { policy?: string; finalizers?: string[] } = {}) {
  const pair = boundPair('c');
  const v: PersistentVolume = structuredClone(pair.volume);
  delete v.spec.csi;
  v.spec.awsElasticBlockStore = { volumeID, fsType: 'ext4' };
  v.spec.persistentVolumeReclaimPolicy = o.policy ?? 'Delete';
  if (annotations) v.metadata.annotations = annotations;
  if (o.finalizers) v.metadata.finalizers = o.finalizers;
  return { claim: pair.claim, volume: v };
}

describe('PV controller: migrated-to', () => {
  it('claim of an in-tree class -> annotated with the CSI provisioner (both keys), no migrated-to, ExternalProvisioning', () => {
    const legacy = storageClass('gp2', { provisioner: 'kubernetes.io/aws-ebs', waitForFirstConsumer: false });
    const result = syncClaim({ claim: claim('c', { className: 'gp2' }), volumes: [], classes: [legacy], pods: [], migratedAwsEbsProvisioner: DRIVER });
    expect(result.claim?.metadata.annotations).toEqual({
      'volume.kubernetes.io/storage-provisioner': DRIVER,
      'volume.beta.kubernetes.io/storage-provisioner': DRIVER,
    });
    expect(result.events.map((e) => e.reason)).toEqual(['ExternalProvisioning']);
  });

  it('claim still assigned to kubernetes.io/aws-ebs (from before migration) -> migrated-to ebs.csi.aws.com added', () => {
    const c = claim('c', { className: 'gp2', volumeName: 'pv-c', phase: 'Bound', annotations: { 'volume.kubernetes.io/storage-provisioner': 'kubernetes.io/aws-ebs', 'pv.kubernetes.io/bind-completed': 'yes' } });
    const result = syncClaim({ claim: c, volumes: [], classes: [], pods: [], migratedAwsEbsProvisioner: DRIVER });
    expect(result.claim?.metadata.annotations?.[MIGRATED_TO]).toBe(DRIVER);
  });

  it('claim assigned to a CSI provisioner carrying migrated-to -> it is removed, as upstream', () => {
    const c = claim('c', { className: 'gp3', annotations: { 'volume.kubernetes.io/storage-provisioner': DRIVER, [MIGRATED_TO]: DRIVER } });
    const result = syncClaim({ claim: c, volumes: [], classes: [storageClass('gp3')], pods: [], migratedAwsEbsProvisioner: DRIVER });
    expect(result.claim?.metadata.annotations?.[MIGRATED_TO]).toBeUndefined();
  });

  it('PV provisioned-by kubernetes.io/aws-ebs -> migrated-to added, kubernetes.io/pv-controller finalizer dropped', () => {
    const { claim: c, volume: v } = inTree(`aws://us-east-1a/${VOL}`, { 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs' }, { finalizers: ['kubernetes.io/pv-protection', 'kubernetes.io/pv-controller'] });
    const result = syncVolume({ volume: v, claim: c });
    expect(result.volume?.metadata.annotations?.[MIGRATED_TO]).toBe(DRIVER);
    expect(result.volume?.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
  });

  it('static in-tree PV (no provisioned-by) -> never migrated-to', () => {
    const { claim: c, volume: v } = inTree(`aws://us-east-1a/${VOL}`);
    expect(syncVolume({ volume: v, claim: c }).volume?.metadata.annotations).toBeUndefined();
  });

  it('migrated PV, claim deleted, Delete -> Released and left to the CSI provisioner: no Failed, no event', () => {
    const { volume: v } = inTree(VOL, { 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs' });
    const result = syncVolume({ volume: v });
    expect(result.volume?.status?.phase).toBe('Released');
    expect(result.events).toEqual([]);
  });

  it('static in-tree PV, claim deleted, Delete -> Failed with VolumeFailedDelete: nobody deletes its disk', () => {
    const { volume: v } = inTree(`aws://us-east-1a/${VOL}`);
    const result = syncVolume({ volume: v });
    expect(result.volume?.status?.phase).toBe('Failed');
    expect(result.events.map((e) => e.reason)).toEqual(['VolumeFailedDelete']);
  });
});

/** The attach/detach controller's plan for node-a, with one pod using claim `c` bound to `v`. */
function planOnNodeA(c: ReturnType<typeof inTree>['claim'], v: ReturnType<typeof inTree>['volume']) {
  return planNodeAttachments({
    nodeName: 'node-a',
    pods: [pod('p', { claims: ['c'], nodeName: 'node-a' })],
    attachments: [],
    claims: new Map([['default/c', c]]),
    volumes: new Map([[v.metadata.name, v]]),
    driver: DRIVER,
  });
}

describe('attach/detach controller and kubelet: in-tree PVs attach through the EBS CSI driver', () => {
  it.each([`aws://us-east-1a/${VOL}`, `aws:///${VOL}`, VOL])('in-tree PV %s -> one VolumeAttachment named from vol-…, attacher ebs.csi.aws.com, source the PV', (volumeID) => {
    const { claim: c, volume: v } = inTree(volumeID);
    const result = planOnNodeA(c, v);
    expect(result.create).toEqual([
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'VolumeAttachment',
        metadata: { name: attachmentName(VOL, DRIVER, 'node-a') },
        spec: { attacher: DRIVER, nodeName: 'node-a', source: { persistentVolumeName: v.metadata.name } },
      },
    ]);
  });

  it('in-tree PV with a malformed aws:// ID -> no VolumeAttachment', () => {
    const { claim: c, volume: v } = inTree('aws://vol-0123');
    const result = planOnNodeA(c, v);
    expect(result.create).toEqual([]);
  });

  it('pod on an in-tree PV -> Running once the VolumeAttachment of vol-… is attached', () => {
    const { claim: c, volume: v } = inTree(`aws://us-east-1a/${VOL}`);
    const p = pod('p', { claims: ['c'], nodeName: 'node-a' });
    const input = { pod: p, claims: new Map([['default/c', c]]), volumes: new Map([[v.metadata.name, v]]), driver: DRIVER, now: '2025-01-01T00:00:00Z' };
    const va = (attached: boolean) => attachment(attachmentName(VOL, DRIVER, 'node-a'), { nodeName: 'node-a', volumeName: v.metadata.name, attached });
    expect(podStartup({ ...input, attachments: new Map([[va(false).metadata.name, va(false)]]) })).toBeUndefined();
    expect(podStartup({ ...input, attachments: new Map([[va(true).metadata.name, va(true)]]) })?.phase).toBe('Running');
  });
});
