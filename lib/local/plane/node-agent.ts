/**
 * A node without a kubelet, told honestly: a small agent per simulated instance that does, as
 * the node itself (user `system:node:NAME`, group `system:nodes`, so the API server's Node
 * authorizer limits it as it limits a kubelet), what kubelet does that volhook's flows meet:
 *
 * - registers the Node (the attach/detach annotation, zone labels, providerID) and reports its
 *   status Ready with capacity, and its CSINode (the EBS node plugin's registration: the
 *   instance id as nodeID);
 * - starts a pod placed on it once every volume it needs is attached (pod-startup.ts): phase
 *   Running and Ready — nothing runs;
 * - reports `status.volumesInUse` (kubelet-decisions.ts), so the attach/detach controller
 *   detaches only what no pod on it still holds;
 * - finishes a pod's deletion: once its grace has ended, the volumes leave `volumesInUse`
 *   and the pod is removed;
 * - finishes a filesystem expansion as kubelet's NodeExpandVolume does (node-expansion.ts);
 * - renews the node's Lease in kube-node-lease.
 *
 * Like kubelet it reads what it needs by GET (claims, volumes, attachments of its own pods:
 * all the Node authorizer lets a node read) and watches only its pods. Decisions are pure
 * (pod-startup.ts, node-expansion.ts, kubelet-decisions.ts); this file does the I/O.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { EBS_DRIVER, TopologyKeys } from '../../contract/index.js';
import { isApiError } from '../../kube/errors.js';
import { watchResource, type WatchedResource } from '../../forwarder/informers.js';
import type { KubeRest } from '../../forwarder/kube/rest.js';
import { MediaTypes } from '../../forwarder/kube/rest.js';
import { silentLogger, type Logger } from '../../forwarder/logger.js';
import { attachmentName, podAttachables } from '../controllers/attachments.js';
import { awaitsNodeExpansion, nodeExpansion } from '../controllers/node-expansion.js';
import { kubeTime, podClaimNames, type PersistentVolume, type PersistentVolumeClaim, type Pod, type VolumeAttachment } from '../controllers/objects.js';
import { awaitsStart, podStartup } from '../controllers/pod-startup.js';
import { ALLOCATABLE_VOLUMES, nodeObject, type LocalNode } from '../stack/cluster-objects.js';
import { graceEnded, volumesInUse } from './kubelet-decisions.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** kubelet's defaults: a 40 s Lease renewed every 10 s. */
const LEASE_DURATION_SECONDS = 40;

export interface NodeAgentOptions {
  /** A client of the API as this node (`system:node:NAME`). */
  rest: KubeRest;
  node: LocalNode;
  region: string;
  driver?: string;
  /** How often waiting pods, deletions and expansions are looked at again (kubelet's loops: 100 ms – 1 s). */
  syncMs?: number;
  leaseRenewMs?: number;
  logger?: Logger;
}

export interface NodeAgent {
  readonly name: string;
  stop(): Promise<void>;
}

/** The Node as its kubelet registers it: labels, the attach/detach annotation, providerID. */
export function registeredNode(node: LocalNode, region: string) {
  const { metadata, spec } = nodeObject(node, region);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { ...metadata, annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
    spec,
  };
}

/** EC2's private DNS names say the address: `ip-10-0-1-10.ec2.internal` is 10.0.1.10. */
function internalIp(name: string): { type: string; address: string }[] {
  const m = /^ip-(\d+)-(\d+)-(\d+)-(\d+)\./.exec(name);
  return m ? [{ type: 'InternalIP', address: m.slice(1, 5).join('.') }] : [];
}

/** The status a healthy kubelet reports. */
export function readyNodeStatus(node: LocalNode, now: string) {
  const resources = { cpu: '2', memory: '8Gi', pods: '110', 'ephemeral-storage': '20Gi' };
  const condition = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now });
  return {
    capacity: resources,
    allocatable: resources,
    conditions: [
      condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status (volhook node agent: no containers run)'),
    ],
    addresses: [...internalIp(node.name), { type: 'Hostname', address: node.name }],
    nodeInfo: {
      machineID: node.instanceId,
      systemUUID: node.instanceId,
      bootID: node.instanceId,
      kernelVersion: '',
      osImage: 'volhook node agent',
      containerRuntimeVersion: 'none://',
      kubeletVersion: '',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

/** The node plugin's registration: the driver, the instance as its node ID, the zone keys. */
export function registeredCsiNode(node: LocalNode, driver: string, nodeUid: string) {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: { name: node.name, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: nodeUid }] },
    spec: {
      drivers: [
        {
          name: driver,
          nodeID: node.instanceId,
          topologyKeys: ['kubernetes.io/os', TopologyKeys.ebsZone, TopologyKeys.wellKnownZone],
          allocatable: { count: ALLOCATABLE_VOLUMES },
        },
      ],
    },
  };
}

/** A GET that answers undefined for an object that is not there — or not yet this node's to read (the Node authorizer's 403). */
async function getIfThere<T>(rest: KubeRest, path: string): Promise<T | undefined> {
  try {
    return await rest.request<T>('GET', path);
  } catch (err) {
    if (isApiError(err, 404) || isApiError(err, 403)) return undefined;
    throw err;
  }
}

export async function startNodeAgent(options: NodeAgentOptions): Promise<NodeAgent> {
  const { rest, node } = options;
  const driver = options.driver ?? EBS_DRIVER;
  const logger = options.logger ?? silentLogger;
  const syncMs = options.syncMs ?? 500;
  const name = node.name;

  // Registration, as kubelet's: the Node, its status, the node plugin's CSINode, the Lease.
  const created = await rest.request<{ metadata: { uid: string } }>('POST', '/api/v1/nodes', { body: registeredNode(node, options.region) });
  await rest.request('PATCH', `/api/v1/nodes/${name}/status`, { body: { status: readyNodeStatus(node, kubeTime()) }, contentType: MediaTypes.mergePatch });
  await rest.request('POST', '/apis/storage.k8s.io/v1/csinodes', { body: registeredCsiNode(node, driver, created.metadata.uid) });
  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases/${name}`;
  const leaseSpec = () => ({ holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: new Date().toISOString().replace('Z', '000Z') });
  await rest.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`, {
    body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: NODE_LEASE_NAMESPACE, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: created.metadata.uid }] }, spec: leaseSpec() },
  });

  let stopped = false;
  let reportedInUse: string[] = [];
  let running: Promise<void> | undefined;
  let again = false;

  const pods: WatchedResource<KubernetesObject> = watchResource<KubernetesObject>({
    rest,
    resource: `pods on ${name}`,
    path: '/api/v1/pods',
    fieldSelector: `spec.nodeName=${name}`,
    handlers: { add: () => schedule(), update: () => schedule(), delete: () => schedule() },
    restartDelayMs: 1_000,
    logger,
  });

  async function lookups(list: readonly Pod[]) {
    const claims = new Map<string, PersistentVolumeClaim>();
    const volumes = new Map<string, PersistentVolume>();
    const attachments = new Map<string, VolumeAttachment>();
    for (const pod of list) {
      const namespace = pod.metadata.namespace ?? 'default';
      for (const claimName of podClaimNames(pod)) {
        const key = `${namespace}/${claimName}`;
        if (claims.has(key)) continue;
        const claim = await getIfThere<PersistentVolumeClaim>(rest, `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${claimName}`);
        if (!claim) continue;
        claims.set(key, claim);
        const volume = claim.spec.volumeName ? await getIfThere<PersistentVolume>(rest, `/api/v1/persistentvolumes/${claim.spec.volumeName}`) : undefined;
        if (volume) volumes.set(volume.metadata.name, volume);
      }
    }
    // The VolumeAttachment of each volume to attach: the claims' PVs and the inline
    // (in-tree awsElasticBlockStore, migrated) volumes alike.
    for (const pod of list) {
      for (const { handle } of podAttachables(pod, { claims, volumes }, driver)) {
        const attachmentKey = attachmentName(handle, driver, name);
        if (attachments.has(attachmentKey)) continue;
        const attachment = await getIfThere<VolumeAttachment>(rest, `/apis/storage.k8s.io/v1/volumeattachments/${attachmentKey}`);
        if (attachment) attachments.set(attachment.metadata.name, attachment);
      }
    }
    return { claims, volumes, attachments };
  }

  async function sync(): Promise<void> {
    const list = pods.cache.list() as unknown as Pod[];
    const now = new Date();
    const { claims, volumes, attachments } = await lookups(list);

    // Volumes in use first: a pod past its grace lets go of its volumes before it is removed.
    const inUse = volumesInUse(list, { claims, volumes }, driver, now);
    if (inUse.join('\n') !== reportedInUse.join('\n')) {
      await rest.request('PATCH', `/api/v1/nodes/${name}/status`, { body: { status: { volumesInUse: inUse } }, contentType: MediaTypes.mergePatch });
      reportedInUse = inUse;
    }

    for (const pod of list) {
      const namespace = pod.metadata.namespace ?? 'default';
      const path = `/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}`;
      if (graceEnded(pod, now)) {
        await rest
          .request('DELETE', path, { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } } })
          .catch((err: unknown) => {
            if (!isApiError(err, 404) && !isApiError(err, 409)) throw err;
          });
        continue;
      }
      if (awaitsStart(pod)) {
        const status = podStartup({ pod, claims, volumes, attachments, driver, now: kubeTime(now) });
        if (status) await rest.request('PATCH', `${path}/status`, { body: { status }, contentType: MediaTypes.mergePatch });
      }
    }

    // NodeExpandVolume for the claims of this node's pods whose disk has grown.
    for (const claim of claims.values()) {
      if (!awaitsNodeExpansion(claim)) continue;
      const volume = claim.spec.volumeName ? volumes.get(claim.spec.volumeName) : undefined;
      const status = nodeExpansion({ claim, volume, pods: list.filter((p) => p.metadata.namespace === claim.metadata.namespace) });
      if (!status) continue;
      const namespace = claim.metadata.namespace ?? 'default';
      await rest.request('PUT', `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${claim.metadata.name}/status`, { body: { ...claim, status } });
      await rest
        .request('POST', `/api/v1/namespaces/${namespace}/events`, {
          body: {
            apiVersion: 'v1',
            kind: 'Event',
            metadata: { generateName: `${claim.metadata.name}.`, namespace },
            involvedObject: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace, name: claim.metadata.name, uid: claim.metadata.uid },
            type: 'Normal',
            reason: 'FileSystemResizeSuccessful',
            message: `MountVolume.NodeExpandVolume succeeded for volume "${claim.spec.volumeName}" ${name}`,
            source: { component: 'kubelet', host: name },
            firstTimestamp: kubeTime(now),
            lastTimestamp: kubeTime(now),
            count: 1,
          },
        })
        .catch((err: unknown) => logger.warn('node agent: event not recorded', { node: name, err: String(err) }));
    }
  }

  /** One sync at a time; an event during one runs another after it. */
  function schedule(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = sync()
      .catch((err: unknown) => logger.warn('node agent: sync failed; retried', { node: name, err: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          schedule();
        }
      });
  }

  await pods.start();
  const ticker = setInterval(schedule, syncMs);
  const renew = setInterval(() => {
    void (async () => {
      const lease = await rest.request<{ metadata: object; spec: object }>('GET', leasePath);
      await rest.request('PUT', leasePath, { body: { ...lease, spec: { ...lease.spec, ...leaseSpec() } } });
    })().catch((err: unknown) => logger.warn('node agent: lease not renewed', { node: name, err: err instanceof Error ? err.message : String(err) }));
  }, options.leaseRenewMs ?? 10_000);

  return {
    name,
    async stop() {
      stopped = true;
      clearInterval(ticker);
      clearInterval(renew);
      await pods.stop();
      await running;
    },
  };
}
