import { describe, expect, it } from 'vitest';
import { attachmentName, planNodeAttachments } from '../../../lib/local/controllers/index.js';
import type { NodeAttachmentInput, PersistentVolume, PersistentVolumeClaim, Pod, VolumeAttachment } from '../../../lib/local/controllers/index.js';
import { attachment, boundPair, claim, pod } from './fixtures.js';

const DRIVER = 'ebs.csi.aws.com';

function plan(pods: Pod[], pairs: Array<{ claim: PersistentVolumeClaim; volume?: PersistentVolume }>, attachments: VolumeAttachment[] = []) {
  const input: NodeAttachmentInput = {
    nodeName: 'node-a',
    pods,
    attachments,
    claims: new Map(pairs.map((p) => [`default/${p.claim.metadata.name}`, p.claim])),
    volumes: new Map(pairs.flatMap((p) => (p.volume ? [[p.volume.metadata.name, p.volume] as const] : []))),
    driver: DRIVER,
  };
  return planNodeAttachments(input);
}

describe('attachmentName', () => {
  it('the reference test vector -> the name kube-controller-manager computes', () => {
    expect(attachmentName('vol-0123456789abcdef0', 'ebs.csi.aws.com', 'ip-10-0-1-23.ec2.internal')).toBe(
      'csi-880af19cc88681d68f80a4a11ffa3d31efb3ee865ea742d7701040e168882925',
    );
  });

  it('another node -> another name', () => {
    expect(attachmentName('vol-1', DRIVER, 'a')).not.toBe(attachmentName('vol-1', DRIVER, 'b'));
  });
});

describe('planNodeAttachments', () => {
  const pair = boundPair('data');
  const vaName = attachmentName(pair.volume.spec.csi!.volumeHandle!, DRIVER, 'node-a');

  it('scheduled pod with a bound CSI PV -> one VolumeAttachment to create', () => {
    const result = plan([pod('p', { claims: ['data'], nodeName: 'node-a' })], [pair]);
    expect(result.create).toEqual([
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'VolumeAttachment',
        metadata: { name: vaName },
        spec: { attacher: DRIVER, nodeName: 'node-a', source: { persistentVolumeName: pair.volume.metadata.name } },
      },
    ]);
    expect(result.delete).toEqual([]);
  });

  it('two pods on the node share the PV -> still one VolumeAttachment', () => {
    const pods = [pod('p1', { claims: ['data'], nodeName: 'node-a' }), pod('p2', { claims: ['data'], nodeName: 'node-a' })];
    expect(plan(pods, [pair]).create).toHaveLength(1);
  });

  it('VolumeAttachment already there -> nothing to do', () => {
    const va = attachment(vaName, { nodeName: 'node-a', volumeName: pair.volume.metadata.name });
    expect(plan([pod('p', { claims: ['data'], nodeName: 'node-a' })], [pair], [va])).toEqual({ create: [], delete: [] });
  });

  it('claim not bound yet -> nothing to attach', () => {
    expect(plan([pod('p', { claims: ['c'], nodeName: 'node-a' })], [{ claim: claim('c') }]).create).toEqual([]);
  });

  it('PV of another CSI driver -> no VolumeAttachment from this controller', () => {
    const other = boundPair('nfs', { driver: 'nfs.csi.k8s.io' });
    expect(plan([pod('p', { claims: ['nfs'], nodeName: 'node-a' })], [other]).create).toEqual([]);
  });

  it('pod being deleted -> its volumes stay attached', () => {
    const va = attachment(vaName, { nodeName: 'node-a', volumeName: pair.volume.metadata.name });
    expect(plan([pod('p', { claims: ['data'], nodeName: 'node-a', deleting: true })], [pair], [va]).delete).toEqual([]);
  });

  it('no pod uses the PV any more -> its VolumeAttachment is deleted', () => {
    const va = attachment(vaName, { nodeName: 'node-a', volumeName: pair.volume.metadata.name });
    expect(plan([], [pair], [va]).delete).toEqual([va]);
  });

  it('the only pod finished (Succeeded) -> VolumeAttachment deleted', () => {
    const va = attachment(vaName, { nodeName: 'node-a', volumeName: pair.volume.metadata.name });
    expect(plan([pod('p', { claims: ['data'], nodeName: 'node-a', phase: 'Succeeded' })], [pair], [va]).delete).toEqual([va]);
  });

  it('unused attachment of another attacher, or one already detaching -> left alone', () => {
    const foreign = attachment('x', { nodeName: 'node-a', volumeName: 'pv-x', attacher: 'other.csi' });
    const detaching = attachment('y', { nodeName: 'node-a', volumeName: 'pv-y', deleting: true });
    expect(plan([], [], [foreign, detaching]).delete).toEqual([]);
  });
});

describe('planNodeAttachments: inline awsElasticBlockStore volumes (CSI migration of inline volumes)', () => {
  const inlinePod = (name: string, volumeID: string, extra: Record<string, unknown> = {}, o: Parameters<typeof pod>[1] = {}): Pod => {
    const p = pod(name, { nodeName: 'node-a', ...o });
    p.spec!.volumes = [{ name: 'disk', awsElasticBlockStore: { volumeID, ...extra } }];
    return p;
  };
  const VOL = 'vol-0123456789abcdef0';
  const inlineName = attachmentName(VOL, DRIVER, 'node-a');

  it('aws://<zone>/vol-… with fsType -> one VolumeAttachment named by the translated handle, the translated spec inline and no PV name', () => {
    const result = plan([inlinePod('p', `aws://us-east-1a/${VOL}`, { fsType: 'ext4' })], []);
    expect(result.create).toEqual([
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'VolumeAttachment',
        metadata: { name: inlineName },
        spec: {
          attacher: DRIVER,
          nodeName: 'node-a',
          source: {
            inlineVolumeSpec: {
              csi: { driver: DRIVER, volumeHandle: VOL, fsType: 'ext4', volumeAttributes: { partition: '0' } },
              accessModes: ['ReadWriteOnce'],
            },
          },
        },
      },
    ]);
  });

  it('bare vol-… with readOnly and a partition -> readOnly and the partition as a string', () => {
    const [va] = plan([inlinePod('p', VOL, { readOnly: true, partition: 2 })], []).create;
    expect(va?.metadata.name).toBe(inlineName);
    expect(va?.spec.source?.inlineVolumeSpec?.csi).toEqual({ driver: DRIVER, volumeHandle: VOL, readOnly: true, volumeAttributes: { partition: '2' } });
  });

  it('a malformed aws:// volume ID -> nothing (the real controller cannot translate it)', () => {
    expect(plan([inlinePod('p', 'aws://us-east-1a/disk-1')], []).create).toEqual([]);
  });

  it('another driver -> no VolumeAttachment for the in-tree EBS volume', () => {
    const input: NodeAttachmentInput = { nodeName: 'node-a', pods: [inlinePod('p', VOL)], attachments: [], claims: new Map(), volumes: new Map(), driver: 'other.csi.example.com' };
    expect(planNodeAttachments(input).create).toEqual([]);
  });

  it('attachment there and the pod still there -> kept; pod gone -> deleted', () => {
    const [va] = plan([inlinePod('p', VOL)], []).create;
    const existing = { ...va!, metadata: { ...va!.metadata, uid: 'u1' } } as VolumeAttachment;
    expect(plan([inlinePod('p', VOL)], [], [existing])).toEqual({ create: [], delete: [] });
    expect(plan([], [], [existing]).delete).toEqual([existing]);
  });
});
