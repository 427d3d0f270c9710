/**
 * The calls every write in the contract goes through (`KubeClients`), and building them from
 * client-node, in the cluster (ServiceAccount) or from a server URL. The forwarder implements
 * the same calls over `node:http` (lib/forwarder/kube/clients.ts) and never loads client-node.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions, StorageV1Api } from '@kubernetes/client-node';
import type { CoreV1Event, V1DeleteOptions, V1PersistentVolume, V1PersistentVolumeClaim, V1VolumeAttachment, V1VolumeAttributesClass } from '@kubernetes/client-node';
import type { JsonPatchOp } from './json-patch.js';

type Named = { name: string };
type NamespacedName = { name: string; namespace: string };
type CustomObject = { group: string; version: string; plural: string; name: string };

/**
 * The API calls of the writes (apply-writes.ts, events.ts, resize-writes.ts) and of the
 * forwarder's live reads, named and shaped as client-node's. Patches named `…Status` of
 * VolumeAttachments and custom objects, and `patchNamespacedEvent`, are merge patches (RFC
 * 7386); every other patch is a JSON patch (RFC 6902).
 */
export interface KubeClients {
  core: {
    createPersistentVolume(args: { body: V1PersistentVolume }): Promise<V1PersistentVolume>;
    deletePersistentVolume(args: Named & { body?: V1DeleteOptions }): Promise<unknown>;
    readPersistentVolume(args: Named): Promise<V1PersistentVolume>;
    patchPersistentVolume(args: Named & { body: JsonPatchOp[] }): Promise<V1PersistentVolume>;
    readNamespacedPersistentVolumeClaim(args: NamespacedName): Promise<V1PersistentVolumeClaim>;
    patchNamespacedPersistentVolumeClaim(args: NamespacedName & { body: JsonPatchOp[] }): Promise<V1PersistentVolumeClaim>;
    patchNamespacedPersistentVolumeClaimStatus(args: NamespacedName & { body: JsonPatchOp[] }): Promise<V1PersistentVolumeClaim>;
    createNamespacedEvent(args: { namespace: string; body: CoreV1Event }): Promise<CoreV1Event>;
    patchNamespacedEvent(args: NamespacedName & { body: object }): Promise<CoreV1Event>;
  };
  storage: {
    readVolumeAttachment(args: Named): Promise<V1VolumeAttachment>;
    patchVolumeAttachment(args: Named & { body: JsonPatchOp[] }): Promise<V1VolumeAttachment>;
    patchVolumeAttachmentStatus(args: Named & { body: object }): Promise<V1VolumeAttachment>;
    readVolumeAttributesClass(args: Named): Promise<V1VolumeAttributesClass>;
  };
  custom: {
    getClusterCustomObject(args: CustomObject): Promise<object>;
    patchClusterCustomObject(args: CustomObject & { body: JsonPatchOp[] }): Promise<object>;
    patchClusterCustomObjectStatus(args: CustomObject & { body: object }): Promise<object>;
    getNamespacedCustomObject(args: CustomObject & { namespace: string }): Promise<object>;
    patchNamespacedCustomObject(args: CustomObject & { namespace: string; body: JsonPatchOp[] }): Promise<object>;
  };
}

export function kubeClientsFromConfig(kc: KubeConfig): KubeClients {
  const core = kc.makeApiClient(CoreV1Api);
  const storage = kc.makeApiClient(StorageV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  // client-node sends a JSON patch unless told otherwise.
  const merge = () => setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const jsonPatch = () => setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
  return {
    core: {
      createPersistentVolume: (args) => core.createPersistentVolume(args),
      deletePersistentVolume: (args) => core.deletePersistentVolume(args),
      readPersistentVolume: (args) => core.readPersistentVolume(args),
      patchPersistentVolume: (args) => core.patchPersistentVolume(args),
      readNamespacedPersistentVolumeClaim: (args) => core.readNamespacedPersistentVolumeClaim(args),
      patchNamespacedPersistentVolumeClaim: (args) => core.patchNamespacedPersistentVolumeClaim(args),
      patchNamespacedPersistentVolumeClaimStatus: (args) => core.patchNamespacedPersistentVolumeClaimStatus(args),
      createNamespacedEvent: (args) => core.createNamespacedEvent(args),
      patchNamespacedEvent: (args) => core.patchNamespacedEvent(args, merge()),
    },
    storage: {
      readVolumeAttachment: (args) => storage.readVolumeAttachment(args),
      patchVolumeAttachment: (args) => storage.patchVolumeAttachment(args),
      patchVolumeAttachmentStatus: (args) => storage.patchVolumeAttachmentStatus(args, merge()),
      readVolumeAttributesClass: (args) => storage.readVolumeAttributesClass(args),
    },
    custom: {
      getClusterCustomObject: (args) => custom.getClusterCustomObject(args) as Promise<object>,
      patchClusterCustomObject: (args) => custom.patchClusterCustomObject(args, jsonPatch()) as Promise<object>,
      patchClusterCustomObjectStatus: (args) => custom.patchClusterCustomObjectStatus(args, merge()) as Promise<object>,
      getNamespacedCustomObject: (args) => custom.getNamespacedCustomObject(args) as Promise<object>,
      patchNamespacedCustomObject: (args) => custom.patchNamespacedCustomObject(args, jsonPatch()) as Promise<object>,
    },
  };
}

export interface KubeServerOptions {
  /** `https://…` (or `http://…` for the local stack). */
  server: string;
  /** Bearer token (a ServiceAccount token for `writeBack: direct`). */
  token?: string;
  /** Base64 PEM of the cluster CA. */
  caData?: string;
  skipTLSVerify?: boolean;
}

/**
 * A KubeConfig for one API server — what the backend uses for `writeBack: direct`, and the
 * forwarder for `VOLHOOK_KUBE_SERVER`. A plain `http://` server gets `skipTLSVerify`, which
 * client-node needs to accept a non-TLS URL at all.
 */
export function kubeConfigFor(options: KubeServerOptions): KubeConfig {
  const kc = new KubeConfig();
  const plainHttp = options.server.startsWith('http://');
  kc.loadFromOptions({
    clusters: [
      {
        name: 'volhook',
        server: options.server.replace(/\/+$/, ''),
        skipTLSVerify: plainHttp || (options.skipTLSVerify ?? false),
        ...(options.caData ? { caData: options.caData } : {}),
      },
    ],
    users: [{ name: 'volhook', ...(options.token ? { token: options.token } : {}) }],
    contexts: [{ name: 'volhook', cluster: 'volhook', user: 'volhook' }],
    currentContext: 'volhook',
  });
  return kc;
}
