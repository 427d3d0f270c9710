/** The local kubelet's node expansion (NodeExpandVolume), pure. */
import { describe, expect, it } from 'vitest';
import { nodeExpansion } from '../../../lib/local/controllers/node-expansion.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod } from '../../../lib/local/controllers/objects.js';

const claim = (statuses: Record<string, string> | undefined): PersistentVolumeClaim =>
  ({
    metadata: { name: 'data', namespace: 'ns', uid: 'u1' },
    spec: { volumeName: 'pvc-1', resources: { requests: { storage: '8Gi' } } },
    status: {
      phase: 'Bound',
      capacity: { storage: '4Gi' },
      allocatedResources: { storage: '8Gi' },
      ...(statuses ? { allocatedResourceStatuses: statuses } : {}),
      conditions: [{ type: 'Resizing', status: 'True' }, { type: 'FileSystemResizePending', status: 'True' }, { type: 'Other', status: 'True' }],
    },
  }) as unknown as PersistentVolumeClaim;
const volume = { metadata: { name: 'pvc-1' }, spec: { capacity: { storage: '8Gi' } } } as unknown as PersistentVolume;
const pod = (phase: string) =>
  ({ metadata: { name: 'app', namespace: 'ns' }, spec: { nodeName: 'n1', volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] }, status: { phase } }) as unknown as Pod;

describe('nodeExpansion', () => {
  it('NodeResizePending, a Running pod mounts it -> capacity of the PV, resize conditions and storage status gone', () => {
    const status = nodeExpansion({ claim: claim({ storage: 'NodeResizePending' }), volume, pods: [pod('Running')] });
    expect(status?.capacity).toEqual({ storage: '8Gi' });
    expect(status?.allocatedResourceStatuses).toBeUndefined();
    expect((status?.conditions as { type: string }[]).map((c) => c.type)).toEqual(['Other']);
    expect(status?.allocatedResources).toEqual({ storage: '8Gi' });
  });

  it.each([
    ['no pod mounts it', claim({ storage: 'NodeResizePending' }), []],
    ['its pod is not Running yet', claim({ storage: 'NodeResizePending' }), [pod('Pending')]],
    ['the controller side is still resizing', claim({ storage: 'ControllerResizeInProgress' }), [pod('Running')]],
    ['nothing pending', claim(undefined), [pod('Running')]],
  ])('%s -> nothing to do', (_name, c, pods) => {
    expect(nodeExpansion({ claim: c, volume, pods })).toBeUndefined();
  });
});
