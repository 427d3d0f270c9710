/**
 * The forwarder's API calls over `rest.ts`: the `KubeClients` that `applyWrites` and the live
 * reads take (lib/kube/clients.ts names them, as client-node does), and the Lease calls of
 * leader election. Objects come back as the API server wrote them (plain JSON: timestamps are
 * strings, as the caches hold them).
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { KubeClients } from '../../kube/clients.js';
import { MediaTypes, type KubeRest } from './rest.js';

const seg = encodeURIComponent;

export function restClients(rest: KubeRest): KubeClients {
  const pv = (name: string) => `/api/v1/persistentvolumes/${seg(name)}`;
  const pvc = (namespace: string, name: string) => `/api/v1/namespaces/${seg(namespace)}/persistentvolumeclaims/${seg(name)}`;
  const va = (name: string) => `/apis/storage.k8s.io/v1/volumeattachments/${seg(name)}`;
  const custom = (o: { group: string; version: string; plural: string; name: string }) => `/apis/${seg(o.group)}/${seg(o.version)}/${seg(o.plural)}/${seg(o.name)}`;
  const namespacedCustom = (o: { group: string; version: string; plural: string; namespace: string; name: string }) =>
    `/apis/${seg(o.group)}/${seg(o.version)}/namespaces/${seg(o.namespace)}/${seg(o.plural)}/${seg(o.name)}`;
  const jsonPatch = MediaTypes.jsonPatch;
  const merge = MediaTypes.mergePatch;
  return {
    core: {
      createPersistentVolume: ({ body }) => rest.request('POST', '/api/v1/persistentvolumes', { body }),
      deletePersistentVolume: ({ name, body }) => rest.request('DELETE', pv(name), body ? { body } : {}),
      readPersistentVolume: ({ name }) => rest.request('GET', pv(name)),
      patchPersistentVolume: ({ name, body }) => rest.request('PATCH', pv(name), { body, contentType: jsonPatch }),
      readNamespacedPersistentVolumeClaim: ({ name, namespace }) => rest.request('GET', pvc(namespace, name)),
      patchNamespacedPersistentVolumeClaim: ({ name, namespace, body }) => rest.request('PATCH', pvc(namespace, name), { body, contentType: jsonPatch }),
      patchNamespacedPersistentVolumeClaimStatus: ({ name, namespace, body }) =>
        rest.request('PATCH', `${pvc(namespace, name)}/status`, { body, contentType: jsonPatch }),
      createNamespacedEvent: ({ namespace, body }) => rest.request('POST', `/api/v1/namespaces/${seg(namespace)}/events`, { body }),
      patchNamespacedEvent: ({ name, namespace, body }) =>
        rest.request('PATCH', `/api/v1/namespaces/${seg(namespace)}/events/${seg(name)}`, { body, contentType: merge }),
    },
    storage: {
      readVolumeAttachment: ({ name }) => rest.request('GET', va(name)),
      patchVolumeAttachment: ({ name, body }) => rest.request('PATCH', va(name), { body, contentType: jsonPatch }),
      patchVolumeAttachmentStatus: ({ name, body }) => rest.request('PATCH', `${va(name)}/status`, { body, contentType: merge }),
      readVolumeAttributesClass: ({ name }) => rest.request('GET', `/apis/storage.k8s.io/v1/volumeattributesclasses/${seg(name)}`),
    },
    custom: {
      getClusterCustomObject: (o) => rest.request('GET', custom(o)),
      patchClusterCustomObject: (o) => rest.request('PATCH', custom(o), { body: o.body, contentType: jsonPatch }),
      patchClusterCustomObjectStatus: (o) => rest.request('PATCH', `${custom(o)}/status`, { body: o.body, contentType: merge }),
      getNamespacedCustomObject: (o) => rest.request('GET', namespacedCustom(o)),
      patchNamespacedCustomObject: (o) => rest.request('PATCH', namespacedCustom(o), { body: o.body, contentType: jsonPatch }),
    },
  };
}

/** The three calls the lock makes, as client-node's CoordinationV1Api names them. */
export interface LeaseApi {
  readNamespacedLease(args: { name: string; namespace: string }): Promise<V1Lease>;
  createNamespacedLease(args: { namespace: string; body: V1Lease }): Promise<V1Lease>;
  replaceNamespacedLease(args: { name: string; namespace: string; body: V1Lease }): Promise<V1Lease>;
}

/** The Lease calls of leader election (get, create, update: the verbs rbac.yaml grants). */
export function restLeaseApi(rest: KubeRest): LeaseApi {
  const leases = (namespace: string) => `/apis/coordination.k8s.io/v1/namespaces/${seg(namespace)}/leases`;
  return {
    readNamespacedLease: ({ name, namespace }) => rest.request<V1Lease>('GET', `${leases(namespace)}/${seg(name)}`),
    createNamespacedLease: ({ namespace, body }) => rest.request<V1Lease>('POST', leases(namespace), { body }),
    replaceNamespacedLease: ({ name, namespace, body }) => rest.request<V1Lease>('PUT', `${leases(namespace)}/${seg(name)}`, { body }),
  };
}
