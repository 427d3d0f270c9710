/**
 * The writes on a VolumeGroupSnapshotContent (groupsnapshot.storage.k8s.io/v1, cluster-scoped):
 * its status as a merge patch of the status subresource, never over another recorded group
 * handle nor on a namesake; its annotations and finalizer by guarded JSON patches.
 */
import { describe, expect, it } from 'vitest';
import { GroupSnapshotAnnotations, GroupSnapshotFinalizers, WriteSchema, type Write } from '../../lib/contract/index.js';
import { applyWrites, type KubeClients } from '../../lib/kube/index.js';

const RESOURCE = { group: 'groupsnapshot.storage.k8s.io', version: 'v1', plural: 'volumegroupsnapshotcontents' };

function fakeClients(object: { metadata: Record<string, unknown>; status?: Record<string, unknown> }) {
  const calls: { call: string; args: Record<string, unknown> }[] = [];
  const custom = {
    getClusterCustomObject: async (args: Record<string, unknown>) => (calls.push({ call: 'get', args }), structuredClone(object)),
    patchClusterCustomObject: async (args: Record<string, unknown>) => (calls.push({ call: 'patch', args }), {}),
    patchClusterCustomObjectStatus: async (args: Record<string, unknown>) => (calls.push({ call: 'patchStatus', args }), {}),
    getNamespacedCustomObject: async () => ({}),
    patchNamespacedCustomObject: async () => ({}),
  };
  return { clients: { custom } as unknown as KubeClients, calls };
}

const status = {
  volumeGroupSnapshotHandle: 'groupsnapcontent-1',
  creationTime: '2026-01-01T00:00:01Z',
  readyToUse: true,
  volumeSnapshotInfoList: [{ volumeHandle: 'vol-a', snapshotHandle: 'snap-a', creationTime: 1_767_225_601_000_000_000, readyToUse: true, restoreSize: 2 ** 30 }],
};
const statusWrite = (uid = 'uid-1'): Write => WriteSchema.parse({ op: 'updateVolumeGroupSnapshotContentStatus', name: 'groupsnapcontent-1', uid, status });

describe('updateVolumeGroupSnapshotContentStatus', () => {
  it('merge-patches the group content status subresource, guarded by the resourceVersion read', async () => {
    const { clients, calls } = fakeClients({ metadata: { name: 'groupsnapcontent-1', uid: 'uid-1', resourceVersion: '7' } });
    await applyWrites(clients, [statusWrite()]);
    expect(calls.map((c) => c.call)).toEqual(['get', 'patchStatus']);
    expect(calls[1]!.args).toEqual({ ...RESOURCE, name: 'groupsnapcontent-1', body: { metadata: { resourceVersion: '7' }, status } });
  });

  it('a namesake (other uid), or another group handle recorded -> not written', async () => {
    const namesake = fakeClients({ metadata: { name: 'groupsnapcontent-1', uid: 'uid-2', resourceVersion: '7' } });
    await applyWrites(namesake.clients, [statusWrite()]);
    expect(namesake.calls.map((c) => c.call)).toEqual(['get']);
    const other = fakeClients({ metadata: { name: 'groupsnapcontent-1', uid: 'uid-1', resourceVersion: '7' }, status: { volumeGroupSnapshotHandle: 'another' } });
    await applyWrites(other.clients, [statusWrite()]);
    expect(other.calls.map((c) => c.call)).toEqual(['get']);
  });

  it('the group content\'s annotation and finalizer are patched on its own resource', async () => {
    const { clients, calls } = fakeClients({ metadata: { name: 'groupsnapcontent-1', uid: 'uid-1', resourceVersion: '7', annotations: {}, finalizers: [GroupSnapshotFinalizers.contentBound] } });
    const target = { kind: 'VolumeGroupSnapshotContent' as const, name: 'groupsnapcontent-1', uid: 'uid-1' };
    await applyWrites(clients, [
      { op: 'setAnnotation', target, key: GroupSnapshotAnnotations.beingCreated, value: 'yes' },
      { op: 'removeFinalizer', target, finalizer: GroupSnapshotFinalizers.contentBound },
    ]);
    const patches = calls.filter((c) => c.call === 'patch');
    expect(patches).toHaveLength(2);
    for (const p of patches) expect(p.args).toMatchObject({ ...RESOURCE, name: 'groupsnapcontent-1' });
    expect(JSON.stringify(patches[0]!.args.body)).toContain('volumegroupsnapshot-being-created');
  });
});
