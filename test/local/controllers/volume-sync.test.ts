import { describe, expect, it } from 'vitest';
import { syncVolume } from '../../../lib/local/controllers/index.js';
import { boundPair, claim, volume } from './fixtures.js';

const PROTECTION = 'kubernetes.io/pv-protection';

describe('syncVolume: phases', () => {
  it('new PV without claimRef (Pending) -> Available, with pv-protection', () => {
    const result = syncVolume({ volume: volume('v', { phase: 'Pending' }) });
    expect(result.volume?.status?.phase).toBe('Available');
    expect(result.volume?.metadata.finalizers).toEqual([PROTECTION]);
  });

  it('PV reserved for a claim name (claimRef without uid) -> Available', () => {
    const result = syncVolume({ volume: volume('v', { phase: 'Pending', claimRef: { name: 'c' } }) });
    expect(result.volume?.status?.phase).toBe('Available');
  });

  it('claim bound to it -> Bound', () => {
    const { claim: c, volume: v } = boundPair('c');
    v.status = { phase: 'Available' };
    expect(syncVolume({ volume: v, claim: c }).volume?.status?.phase).toBe('Bound');
  });

  it('pre-bound PV whose claim has not bound yet -> left for the claim sync', () => {
    const c = claim('c');
    const v = volume('pvc-x', { phase: 'Pending', claimRef: { name: 'c', uid: c.metadata.uid }, finalizers: [PROTECTION] });
    expect(syncVolume({ volume: v, claim: c })).toEqual({ volume: undefined, events: [] });
  });

  it('claim deleted, policy Retain -> Released and stays so', () => {
    const { volume: v } = boundPair('c');
    const result = syncVolume({ volume: v });
    expect(result.volume?.status?.phase).toBe('Released');
    expect(result.events).toEqual([]);
    expect(syncVolume({ volume: result.volume! })).toEqual({ volume: undefined, events: [] });
  });

  it('claim deleted and recreated under the same name -> Released (uid differs)', () => {
    const { volume: v } = boundPair('c');
    const again = claim('c', { uid: 'new-uid' });
    expect(syncVolume({ volume: v, claim: again }).volume?.status?.phase).toBe('Released');
  });

  it('claim deleted, policy Delete, provisioned by a CSI provisioner -> Released, left to the provisioner', () => {
    const { volume: v } = boundPair('c');
    v.spec.persistentVolumeReclaimPolicy = 'Delete';
    v.metadata.annotations = { 'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com' };
    const result = syncVolume({ volume: v });
    expect(result.volume?.status?.phase).toBe('Released');
    expect(result.events).toEqual([]);
  });

  it('claim deleted, policy Delete, not provisioned -> Failed with VolumeFailedDelete, once', () => {
    const { volume: v } = boundPair('c');
    v.spec.persistentVolumeReclaimPolicy = 'Delete';
    const result = syncVolume({ volume: v });
    expect(result.volume?.status?.phase).toBe('Failed');
    expect(result.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'VolumeFailedDelete']]);
    expect(syncVolume({ volume: result.volume! }).events).toEqual([]);
  });

  it('claim bound elsewhere, claimRef set by the controller -> claimRef dropped, Available', () => {
    const c = claim('c', { volumeName: 'other' });
    const v = volume('v', {
      phase: 'Bound',
      claimRef: { name: 'c', uid: c.metadata.uid },
      annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' },
    });
    const result = syncVolume({ volume: v, claim: c });
    expect(result.volume?.spec.claimRef).toBeUndefined();
    expect(result.volume?.metadata.annotations).toBeUndefined();
    expect(result.volume?.status?.phase).toBe('Available');
  });

  it('claim bound elsewhere, claimRef set by a user -> kept without uid, Available', () => {
    const c = claim('c', { volumeName: 'other' });
    const v = volume('v', { phase: 'Bound', claimRef: { name: 'c', uid: c.metadata.uid } });
    const result = syncVolume({ volume: v, claim: c });
    expect(result.volume?.spec.claimRef).toMatchObject({ name: 'c', uid: '' });
    expect(result.volume?.status?.phase).toBe('Available');
  });
});

describe('syncVolume: protection finalizer', () => {
  it('deleted while Bound -> keeps pv-protection', () => {
    const { claim: c, volume: v } = boundPair('c');
    v.metadata.finalizers = [PROTECTION];
    v.metadata.deletionTimestamp = '2024-01-02T00:00:00Z';
    expect(syncVolume({ volume: v, claim: c }).volume).toBeUndefined();
  });

  it('deleted and its claim gone -> Released and pv-protection removed, other finalizers kept', () => {
    const { volume: v } = boundPair('c');
    v.metadata.finalizers = [PROTECTION, 'external-provisioner.volume.kubernetes.io/finalizer'];
    v.metadata.deletionTimestamp = '2024-01-02T00:00:00Z';
    const result = syncVolume({ volume: v });
    expect(result.volume?.status?.phase).toBe('Released');
    expect(result.volume?.metadata.finalizers).toEqual(['external-provisioner.volume.kubernetes.io/finalizer']);
  });

  it('deleted while Available -> pv-protection removed', () => {
    const v = volume('v', { deleting: true, finalizers: [PROTECTION] });
    expect(syncVolume({ volume: v }).volume?.metadata.finalizers).toEqual([]);
  });
});
