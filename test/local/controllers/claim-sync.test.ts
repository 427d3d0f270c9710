import { describe, expect, it } from 'vitest';
import { syncClaim } from '../../../lib/local/controllers/index.js';
import type { ClaimSyncInput, PersistentVolumeClaim } from '../../../lib/local/controllers/index.js';
import { boundPair, claim, pod, storageClass, volume } from './fixtures.js';

const gp3 = storageClass('gp3');
const wffc = storageClass('wffc', { waitForFirstConsumer: true });
const PROTECTION = 'kubernetes.io/pvc-protection';

function run(c: PersistentVolumeClaim, more: Partial<ClaimSyncInput> = {}) {
  return syncClaim({ claim: c, volumes: [], classes: [gp3, wffc], pods: [], migratedAwsEbsProvisioner: 'ebs.csi.aws.com', ...more });
}

describe('syncClaim: protection finalizer', () => {
  it('new claim -> gets kubernetes.io/pvc-protection', () => {
    expect(run(claim('c', { className: 'gp3' })).claim?.metadata.finalizers).toEqual([PROTECTION]);
  });

  it('deleted claim mounted by a scheduled running pod -> keeps the finalizer', () => {
    const c = claim('c', { className: 'gp3', deleting: true, finalizers: [PROTECTION] });
    const result = run(c, { pods: [pod('p', { claims: ['c'], nodeName: 'n1', phase: 'Running' })] });
    expect(result.claim?.metadata.finalizers ?? c.metadata.finalizers).toEqual([PROTECTION]);
  });

  it.each([
    ['only a Succeeded pod uses it', pod('p', { claims: ['c'], nodeName: 'n1', phase: 'Succeeded' })],
    ['only an unscheduled pod names it', pod('p', { claims: ['c'] })],
    ['a pod of another namespace names it', pod('p', { claims: ['c'], nodeName: 'n1', namespace: 'other' })],
  ])('deleted claim, %s -> finalizer removed', (_name, p) => {
    const c = claim('c', { className: 'gp3', deleting: true, finalizers: ['other/keep', PROTECTION] });
    expect(run(c, { pods: [p] }).claim?.metadata.finalizers).toEqual(['other/keep']);
  });
});

describe('syncClaim: default class', () => {
  const older = storageClass('older', { isDefault: true, created: '2024-01-01T00:00:00Z' });
  const newer = storageClass('newer', { isDefault: true, created: '2024-06-01T00:00:00Z' });

  it('no storageClassName and a default class -> the newest default is written into the spec', () => {
    const result = run(claim('c'), { classes: [older, newer, gp3] });
    expect(result.claim?.spec.storageClassName).toBe('newer');
  });

  it('storageClassName "" -> stays without class, FailedBinding event', () => {
    const result = run(claim('c', { className: '' }), { classes: [older] });
    expect(result.claim?.spec.storageClassName).toBe('');
    expect(result.events.map((e) => [e.type, e.reason, e.message])).toEqual([
      ['Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set'],
    ]);
  });

  it('beta class annotation -> no default assigned', () => {
    const c = claim('c', { annotations: { 'volume.beta.kubernetes.io/storage-class': 'gp3' } });
    expect(run(c, { classes: [older, gp3] }).claim?.spec.storageClassName).toBeUndefined();
  });
});

describe('syncClaim: binding', () => {
  it('a fitting Available PV -> both sides written as bound', () => {
    const c = claim('c', { className: 'gp3', storage: '5Gi' });
    const v = volume('pv1', { className: 'gp3', storage: '10Gi', accessModes: ['ReadWriteOnce'] });
    const result = run(c, { volumes: [v] });

    expect(result.volume?.spec.claimRef).toEqual({
      kind: 'PersistentVolumeClaim',
      apiVersion: 'v1',
      namespace: 'default',
      name: 'c',
      uid: c.metadata.uid,
      resourceVersion: c.metadata.resourceVersion,
    });
    expect(result.volume?.metadata.annotations).toEqual({ 'pv.kubernetes.io/bound-by-controller': 'yes' });
    expect(result.volume?.status?.phase).toBe('Bound');
    expect(result.claim?.spec.volumeName).toBe('pv1');
    expect(result.claim?.metadata.annotations).toEqual({
      'pv.kubernetes.io/bind-completed': 'yes',
      'pv.kubernetes.io/bound-by-controller': 'yes',
    });
    expect(result.claim?.status).toEqual({ phase: 'Bound', capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'] });
    expect(result.events).toEqual([]);
  });

  it('PV pre-bound by a provisioner -> bound without bound-by-controller on the PV', () => {
    const c = claim('c', { className: 'gp3' });
    const v = volume('pvc-uid-c', { className: 'gp3', claimRef: { name: 'c', uid: c.metadata.uid }, phase: 'Pending' });
    const result = run(c, { volumes: [v] });
    expect(result.volume?.metadata.annotations).toBeUndefined();
    expect(result.volume?.status?.phase).toBe('Bound');
    expect(result.claim?.spec.volumeName).toBe('pvc-uid-c');
  });

  it('claim and PV already bound -> no writes, no events', () => {
    const { claim: c, volume: v } = boundPair('c');
    c.metadata.finalizers = [PROTECTION];
    c.status = { phase: 'Bound', capacity: v.spec.capacity, accessModes: v.spec.accessModes };
    expect(run(c, { volumes: [v] })).toEqual({ claim: undefined, volume: undefined, events: [] });
  });

  it('claim naming a PV that is too small -> Pending with a VolumeMismatch warning', () => {
    const c = claim('c', { className: 'gp3', storage: '20Gi', volumeName: 'pv1' });
    const result = run(c, { volumes: [volume('pv1', { className: 'gp3', storage: '10Gi' })] });
    expect(result.volume).toBeUndefined();
    expect(result.events.map((e) => [e.type, e.reason, e.message])).toEqual([
      ['Warning', 'VolumeMismatch', 'Cannot bind to requested volume "pv1": requested PV is too small'],
    ]);
  });

  it('claim naming a PV bound to another claim -> Pending with a FailedBinding warning', () => {
    const c = claim('c', { className: 'gp3', volumeName: 'pv1' });
    const result = run(c, { volumes: [volume('pv1', { className: 'gp3', claimRef: { name: 'x', uid: 'uid-x' } })] });
    expect(result.volume).toBeUndefined();
    expect(result.events[0]?.message).toBe('volume "pv1" already bound to a different claim.');
  });
});

describe('syncClaim: dynamic provisioning', () => {
  it('no PV fits and the class has a provisioner -> both provisioner annotations and ExternalProvisioning', () => {
    const result = run(claim('c', { className: 'gp3' }), { volumes: [volume('small', { className: 'gp3', storage: '1Gi' })] });
    expect(result.claim?.metadata.annotations).toEqual({
      'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com',
      'volume.beta.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com',
    });
    expect(result.volume).toBeUndefined();
    expect(result.events.map((e) => [e.type, e.reason, e.message])).toEqual([
      [
        'Normal',
        'ExternalProvisioning',
        "Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
      ],
    ]);
  });

  it('in-tree kubernetes.io/aws-ebs class -> handed to the migrated CSI provisioner', () => {
    const legacy = storageClass('legacy', { provisioner: 'kubernetes.io/aws-ebs' });
    const result = run(claim('c', { className: 'legacy' }), { classes: [legacy], migratedAwsEbsProvisioner: 'volhook.example' });
    expect(result.claim?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner']).toBe('volhook.example');
  });

  it('kubernetes.io/no-provisioner class -> no annotation, ProvisioningFailed warning', () => {
    const local = storageClass('local', { provisioner: 'kubernetes.io/no-provisioner' });
    const result = run(claim('c', { className: 'local' }), { classes: [local] });
    expect(result.claim?.metadata.annotations).toBeUndefined();
    expect(result.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'ProvisioningFailed']]);
  });

  it('class does not exist -> ProvisioningFailed naming it', () => {
    const result = run(claim('c', { className: 'nope' }));
    expect(result.events.map((e) => e.message)).toEqual(['storageclass.storage.k8s.io "nope" not found']);
  });

  it('WaitForFirstConsumer before a node is selected -> no binding, no annotation, WaitForFirstConsumer event', () => {
    const result = run(claim('c', { className: 'wffc' }), { volumes: [volume('v', { className: 'wffc' })] });
    expect(result.volume).toBeUndefined();
    expect(result.claim?.metadata.annotations).toBeUndefined();
    expect(result.events.map((e) => e.reason)).toEqual(['WaitForFirstConsumer']);
  });

  it('WaitForFirstConsumer with a selected node -> an Available PV reachable from it is bound', () => {
    const c = claim('c', { className: 'wffc', annotations: { 'volume.kubernetes.io/selected-node': 'node-a' } });
    const result = run(c, {
      volumes: [volume('far', { className: 'wffc', zone: 'us-east-1b' }), volume('near', { className: 'wffc', zone: 'us-east-1a', storage: '50Gi' })],
      selectedNode: { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'us-east-1a' } },
    });
    expect(result.volume?.metadata.name).toBe('near');
    expect(result.claim?.spec.volumeName).toBe('near');
  });

  it('WaitForFirstConsumer whose selected node no longer exists -> no static binding, provisioning requested', () => {
    const c = claim('c', { className: 'wffc', annotations: { 'volume.kubernetes.io/selected-node': 'gone' } });
    const result = run(c, { volumes: [volume('v', { className: 'wffc' })] });
    expect(result.volume).toBeUndefined();
    expect(result.claim?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner']).toBe('ebs.csi.aws.com');
  });

  it('WaitForFirstConsumer with a selected node and no reachable PV -> provisioning requested', () => {
    const c = claim('c', { className: 'wffc', annotations: { 'volume.kubernetes.io/selected-node': 'node-a' } });
    const result = run(c, {
      volumes: [volume('far', { className: 'wffc', zone: 'us-east-1b' })],
      selectedNode: { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'us-east-1a' } },
    });
    expect(result.volume).toBeUndefined();
    expect(result.claim?.metadata.annotations?.['volume.kubernetes.io/storage-provisioner']).toBe('ebs.csi.aws.com');
  });
});

describe('syncClaim: Lost', () => {
  it('bound claim whose PV is gone -> Lost, capacity dropped, ClaimLost warning', () => {
    const { claim: c } = boundPair('c');
    c.status = { phase: 'Bound', capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'] };
    const result = run(c, { volumes: [] });
    expect(result.claim?.status).toEqual({ phase: 'Lost' });
    expect(result.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'ClaimLost']]);
  });

  it('claim already Lost -> no second ClaimLost event', () => {
    const { claim: c } = boundPair('c');
    c.status = { phase: 'Lost' };
    expect(run(c, { volumes: [] }).events).toEqual([]);
  });

  it('bound claim whose PV now names another claim -> Lost with ClaimMisbound', () => {
    const { claim: c, volume: v } = boundPair('c');
    v.spec.claimRef = { ...v.spec.claimRef, uid: 'someone-else' };
    const result = run(c, { volumes: [v] });
    expect(result.claim?.status?.phase).toBe('Lost');
    expect(result.events.map((e) => e.reason)).toEqual(['ClaimMisbound']);
  });

  it('Lost claim whose PV is back and names it -> Bound again', () => {
    const { claim: c, volume: v } = boundPair('c');
    c.status = { phase: 'Lost' };
    v.status = { phase: 'Available' };
    const result = run(c, { volumes: [v] });
    expect(result.claim?.status?.phase).toBe('Bound');
    expect(result.volume?.status?.phase).toBe('Bound');
  });
});
