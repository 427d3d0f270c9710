/**
 * The real plane's pure parts (lib/local/plane), which need no Go: the node agent's decisions,
 * what it registers, where objects are created, and the kubeconfig both modes write.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { attachmentName } from '../../../lib/local/controllers/attachments.js';
import type { PersistentVolume, PersistentVolumeClaim, Pod } from '../../../lib/local/controllers/objects.js';
import { collectionPath } from '../../../lib/local/plane/cluster.js';
import { graceEnded, uniqueVolumeName, volumesInUse } from '../../../lib/local/plane/kubelet-decisions.js';
import { kubeconfigText } from '../../../lib/local/plane/kubeconfig.js';
import { registeredCsiNode, registeredNode, readyNodeStatus } from '../../../lib/local/plane/node-agent.js';

const DRIVER = 'ebs.csi.aws.com';
const NOW = new Date('2026-12-06T12:00:00Z');
const node = { name: 'ip-10-0-2-10.ec2.internal', zone: 'us-east-1b', zoneId: 'use1-az2', instanceId: 'i-0123456789abcdef0' };

function claim(name: string, volumeName: string, uid = `uid-${name}`): PersistentVolumeClaim {
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'apps', uid }, spec: { volumeName }, status: { phase: 'Bound' } } as PersistentVolumeClaim;
}
function volume(name: string, handle: string, claimUid: string): PersistentVolume {
  return { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name }, spec: { csi: { driver: DRIVER, volumeHandle: handle }, claimRef: { uid: claimUid } } } as PersistentVolume;
}
function pod(name: string, claims: string[], extra: { deletionTimestamp?: string; phase?: string } = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'apps', ...(extra.deletionTimestamp && { deletionTimestamp: extra.deletionTimestamp }) },
    spec: { nodeName: node.name, volumes: claims.map((claimName) => ({ name: claimName, persistentVolumeClaim: { claimName } })) },
    status: { phase: extra.phase ?? 'Running' },
  } as Pod;
}
const lookup = {
  claims: new Map([
    ['apps/a', claim('a', 'pv-a')],
    ['apps/b', claim('b', 'pv-b')],
  ]),
  volumes: new Map([
    ['pv-a', volume('pv-a', 'vol-a', 'uid-a')],
    ['pv-b', volume('pv-b', 'vol-b', 'uid-b')],
  ]),
};

describe("the node agent's decisions", () => {
  it('volumesInUse -> the CSI unique names of the volumes its pods hold, each once, sorted', () => {
    expect(volumesInUse([pod('p1', ['b', 'a']), pod('p2', ['a'])], lookup, DRIVER, NOW)).toEqual(['kubernetes.io/csi/ebs.csi.aws.com^vol-a', 'kubernetes.io/csi/ebs.csi.aws.com^vol-b']);
    expect(uniqueVolumeName(DRIVER, 'vol-a')).toBe('kubernetes.io/csi/ebs.csi.aws.com^vol-a');
  });

  it('a pod deleted but within its grace still holds its volumes; past it, or finished, it does not', () => {
    const within = pod('p1', ['a'], { deletionTimestamp: '2026-12-06T12:00:05Z' });
    const past = pod('p2', ['b'], { deletionTimestamp: '2026-12-06T11:59:59Z' });
    expect(graceEnded(within, NOW)).toBe(false);
    expect(graceEnded(past, NOW)).toBe(true);
    expect(graceEnded(pod('p3', ['a']), NOW)).toBe(false);
    expect(volumesInUse([within, past], lookup, DRIVER, NOW)).toEqual(['kubernetes.io/csi/ebs.csi.aws.com^vol-a']);
    expect(volumesInUse([pod('p4', ['a'], { phase: 'Succeeded' })], lookup, DRIVER, NOW)).toEqual([]);
  });

  it("a pod's inline awsElasticBlockStore volume (migrated) -> in use under its translated handle, with its claims'; gone with the pod's grace", () => {
    const inline = pod('p1', ['a']);
    inline.spec!.volumes!.push({ name: 'disk', awsElasticBlockStore: { volumeID: 'aws://us-east-1b/vol-inline', fsType: 'ext4' } } as never);
    expect(volumesInUse([inline], lookup, DRIVER, NOW)).toEqual(['kubernetes.io/csi/ebs.csi.aws.com^vol-a', 'kubernetes.io/csi/ebs.csi.aws.com^vol-inline']);
    const past = { ...inline, metadata: { ...inline.metadata, deletionTimestamp: '2026-12-06T11:59:59Z' } };
    expect(volumesInUse([past], lookup, DRIVER, NOW)).toEqual([]);
  });

  it('a claim not bound to its volume (another claim uid) -> not in use by this pod', () => {
    const stale = { ...lookup, volumes: new Map([['pv-a', volume('pv-a', 'vol-a', 'someone-else')]]) };
    expect(volumesInUse([pod('p1', ['a'])], stale, DRIVER, NOW)).toEqual([]);
    // The attachment it waits for is the one the attach/detach controller names.
    expect(attachmentName('vol-a', DRIVER, node.name)).toMatch(/^csi-[0-9a-f]{64}$/);
  });
});

describe('what the node agent registers', () => {
  it('the Node -> controller-managed attach/detach, zone labels, providerID; Ready with capacity', () => {
    const registered = registeredNode(node, 'us-east-1');
    expect(registered.metadata.annotations).toEqual({ 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' });
    expect(registered.metadata.labels).toMatchObject({ 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': node.name, 'topology.kubernetes.io/zone': 'us-east-1b', 'topology.ebs.csi.aws.com/zone': 'us-east-1b' });
    expect(registered.spec.providerID).toBe('aws:///us-east-1b/i-0123456789abcdef0');
    const status = readyNodeStatus(node, '2026-12-06T12:00:00Z');
    expect(status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(status.allocatable).toMatchObject({ cpu: '2', pods: '110' });
    expect(status.addresses).toContainEqual({ type: 'InternalIP', address: '10.0.2.10' });
  });

  it("the CSINode -> the EBS driver with the instance as nodeID and the driver's topology keys", () => {
    const csiNode = registeredCsiNode(node, DRIVER, 'node-uid');
    expect(csiNode.spec.drivers).toEqual([
      { name: DRIVER, nodeID: 'i-0123456789abcdef0', topologyKeys: ['kubernetes.io/os', 'topology.ebs.csi.aws.com/zone', 'topology.kubernetes.io/zone'], allocatable: { count: 26 } },
    ]);
    expect(csiNode.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: 'node-uid' }]);
  });
});

describe('where the setup creates objects', () => {
  it('core, grouped, namespaced and cluster-scoped kinds -> their collection paths; another kind or a namespaced one without namespace -> refused, named', () => {
    expect(collectionPath({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'f', namespace: 'volhook-system' } })).toBe('/api/v1/namespaces/volhook-system/serviceaccounts');
    expect(collectionPath({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'f' } })).toBe('/apis/rbac.authorization.k8s.io/v1/clusterroles');
    expect(collectionPath({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'f', namespace: 'n' } })).toBe('/apis/rbac.authorization.k8s.io/v1/namespaces/n/roles');
    expect(() => collectionPath({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'f', namespace: 'n' } })).toThrow(/cannot create a Deployment/);
    expect(() => collectionPath({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'f' } })).toThrow(/ServiceAccount f names no namespace/);
  });
});

describe('the kubeconfig both modes write', () => {
  it('the real plane -> its server, CA and token; the simulated API -> its server, no credentials', () => {
    const real = parse(kubeconfigText({ server: 'https://127.0.0.1:6443', token: 't0k', caData: 'Q0E=' }));
    expect(real['current-context']).toBe('volhook-local');
    expect(real.clusters[0].cluster).toEqual({ server: 'https://127.0.0.1:6443', 'certificate-authority-data': 'Q0E=' });
    expect(real.users[0].user).toEqual({ token: 't0k' });
    const simulated = parse(kubeconfigText({ server: 'http://127.0.0.1:8001' }));
    expect(simulated.clusters[0].cluster).toEqual({ server: 'http://127.0.0.1:8001' });
    expect(simulated.users[0].user).toEqual({});
  });
});
