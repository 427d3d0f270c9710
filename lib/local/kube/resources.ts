import type { ResourceName } from './types.js';

/** What the server and the store need to know about one served resource. */
export interface ResourceInfo {
  resource: ResourceName;
  /** '' for the core group. */
  group: string;
  version: 'v1';
  kind: string;
  listKind: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  /** Has a `/status` subresource: the main endpoint ignores status, `/status` ignores the rest. */
  status: boolean;
  /** DELETE answers with the object (true) or with a Success Status (false), as the real registry does. */
  returnsDeletedObject: boolean;
  /** Field selectors beyond `metadata.name` (and `metadata.namespace` when namespaced). */
  fields: string[];
  /** Discovery categories; pods are in `all`, so `kubectl get all` works. */
  categories: string[];
  /**
   * Accepts strategic merge patches. Custom resources do not (the API server answers 415),
   * so kubectl and client libraries send them JSON merge patches.
   */
  strategicMerge: boolean;
}

function info(
  resource: ResourceName,
  group: string,
  kind: string,
  namespaced: boolean,
  extra: Partial<Pick<ResourceInfo, 'shortNames' | 'status' | 'returnsDeletedObject' | 'fields' | 'categories' | 'strategicMerge'>> = {},
): ResourceInfo {
  return {
    resource,
    group,
    version: 'v1',
    kind,
    listKind: `${kind}List`,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: extra.shortNames ?? [],
    status: extra.status ?? false,
    returnsDeletedObject: extra.returnsDeletedObject ?? true,
    fields: extra.fields ?? [],
    categories: extra.categories ?? [],
    strategicMerge: extra.strategicMerge ?? true,
  };
}

/**
 * The CSI snapshot API (kubernetes-csi/external-snapshotter v8 CRDs, `snapshot.storage.k8s.io/v1`).
 * Custom resources: no strategic merge, status dropped on create, the object returned on delete.
 */
export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';

function crd(resource: ResourceName, kind: string, namespaced: boolean, shortNames: string[], status: boolean): ResourceInfo {
  return info(resource, SNAPSHOT_GROUP, kind, namespaced, { shortNames, status, strategicMerge: false });
}

const EVENT_FIELDS = [
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
];

const POD_FIELDS = [
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.schedulerName',
  'spec.serviceAccountName',
  'spec.hostNetwork',
  'status.phase',
  'status.podIP',
  'status.nominatedNodeName',
];

export const RESOURCES: Record<ResourceName, ResourceInfo> = {
  namespaces: info('namespaces', '', 'Namespace', false, { shortNames: ['ns'], status: true, returnsDeletedObject: false, fields: ['status.phase'] }),
  nodes: info('nodes', '', 'Node', false, { shortNames: ['no'], status: true, returnsDeletedObject: false, fields: ['spec.unschedulable'] }),
  pods: info('pods', '', 'Pod', true, { shortNames: ['po'], status: true, fields: POD_FIELDS, categories: ['all'] }),
  persistentvolumes: info('persistentvolumes', '', 'PersistentVolume', false, { shortNames: ['pv'], status: true }),
  persistentvolumeclaims: info('persistentvolumeclaims', '', 'PersistentVolumeClaim', true, { shortNames: ['pvc'], status: true }),
  events: info('events', '', 'Event', true, { shortNames: ['ev'], returnsDeletedObject: false, fields: EVENT_FIELDS }),
  storageclasses: info('storageclasses', 'storage.k8s.io', 'StorageClass', false, { shortNames: ['sc'] }),
  volumeattachments: info('volumeattachments', 'storage.k8s.io', 'VolumeAttachment', false, { status: true }),
  csinodes: info('csinodes', 'storage.k8s.io', 'CSINode', false),
  csidrivers: info('csidrivers', 'storage.k8s.io', 'CSIDriver', false),
  // Leader election's lock (the forwarder's replicas): namespaced, no status, no subresources.
  leases: info('leases', 'coordination.k8s.io', 'Lease', true),
  volumesnapshots: crd('volumesnapshots', 'VolumeSnapshot', true, ['vs'], true),
  volumesnapshotcontents: crd('volumesnapshotcontents', 'VolumeSnapshotContent', false, ['vsc', 'vscs'], true),
  volumesnapshotclasses: crd('volumesnapshotclasses', 'VolumeSnapshotClass', false, ['vsclass', 'vsclasses'], false),
  volumeattributesclasses: info('volumeattributesclasses', 'storage.k8s.io', 'VolumeAttributesClass', false, { shortNames: ['vac'] }),
};

export const RESOURCE_NAMES = Object.keys(RESOURCES) as ResourceName[];

export function apiVersionOf(info: ResourceInfo): string {
  return info.group ? `${info.group}/${info.version}` : info.version;
}

/** The served API groups (core first), each with its resources, for routing and discovery. */
export function groupResources(group: string): ResourceInfo[] {
  return RESOURCE_NAMES.map((name) => RESOURCES[name]).filter((r) => r.group === group);
}

export function resourceInfo(resource: ResourceName): ResourceInfo {
  const found = RESOURCES[resource];
  if (!found) throw new Error(`unknown resource ${String(resource)}`);
  return found;
}
