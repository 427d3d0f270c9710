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
  /** A custom resource (its CRD installed), not a kind compiled into kube-apiserver. */
  custom: boolean;
}

function info(
  resource: ResourceName,
  group: string,
  kind: string,
  namespaced: boolean,
  extra: Partial<Pick<ResourceInfo, 'shortNames' | 'status' | 'returnsDeletedObject' | 'fields' | 'categories' | 'strategicMerge' | 'custom'>> = {},
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
    custom: extra.custom ?? false,
  };
}

/**
 * The CSI snapshot API (kubernetes-csi/external-snapshotter v8 CRDs, `snapshot.storage.k8s.io/v1`).
 * Custom resources: no strategic merge, status dropped on create, the object returned on delete.
 */
export const SNAPSHOT_GROUP = 'snapshot.storage.k8s.io';

/** The CSI group snapshot API (external-snapshotter v8.6 CRDs, `groupsnapshot.storage.k8s.io/v1`). */
export const GROUP_SNAPSHOT_GROUP = 'groupsnapshot.storage.k8s.io';

/** prometheus-operator's CRDs; served only when the server is told the cluster has them. */
export const MONITORING_GROUP = 'monitoring.coreos.com';

function crd(
  resource: ResourceName,
  group: string,
  kind: string,
  namespaced: boolean,
  extra: Partial<Pick<ResourceInfo, 'shortNames' | 'status' | 'categories'>> = {},
): ResourceInfo {
  return info(resource, group, kind, namespaced, { ...extra, strategicMerge: false, custom: true });
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
  volumesnapshots: crd('volumesnapshots', SNAPSHOT_GROUP, 'VolumeSnapshot', true, { shortNames: ['vs'], status: true }),
  volumesnapshotcontents: crd('volumesnapshotcontents', SNAPSHOT_GROUP, 'VolumeSnapshotContent', false, { shortNames: ['vsc', 'vscs'], status: true }),
  volumesnapshotclasses: crd('volumesnapshotclasses', SNAPSHOT_GROUP, 'VolumeSnapshotClass', false, { shortNames: ['vsclass', 'vsclasses'] }),
  volumegroupsnapshots: crd('volumegroupsnapshots', GROUP_SNAPSHOT_GROUP, 'VolumeGroupSnapshot', true, { shortNames: ['vgs'], status: true }),
  volumegroupsnapshotcontents: crd('volumegroupsnapshotcontents', GROUP_SNAPSHOT_GROUP, 'VolumeGroupSnapshotContent', false, { shortNames: ['vgsc', 'vgscs'], status: true }),
  volumegroupsnapshotclasses: crd('volumegroupsnapshotclasses', GROUP_SNAPSHOT_GROUP, 'VolumeGroupSnapshotClass', false, { shortNames: ['vgsclass', 'vgsclasses'] }),
  volumeattributesclasses: info('volumeattributesclasses', 'storage.k8s.io', 'VolumeAttributesClass', false, { shortNames: ['vac'] }),
  // What the forwarder's manifests and its Helm chart install. No controllers act on these:
  // a Deployment is stored, never rolled out; a Service gets a cluster IP and nothing more.
  serviceaccounts: info('serviceaccounts', '', 'ServiceAccount', true, { shortNames: ['sa'] }),
  configmaps: info('configmaps', '', 'ConfigMap', true, { shortNames: ['cm'], returnsDeletedObject: false }),
  secrets: info('secrets', '', 'Secret', true, { returnsDeletedObject: false, fields: ['type'] }),
  services: info('services', '', 'Service', true, { shortNames: ['svc'], status: true, categories: ['all'], fields: ['spec.clusterIP', 'spec.type'] }),
  roles: info('roles', 'rbac.authorization.k8s.io', 'Role', true, { returnsDeletedObject: false }),
  rolebindings: info('rolebindings', 'rbac.authorization.k8s.io', 'RoleBinding', true, { returnsDeletedObject: false }),
  clusterroles: info('clusterroles', 'rbac.authorization.k8s.io', 'ClusterRole', false, { returnsDeletedObject: false }),
  clusterrolebindings: info('clusterrolebindings', 'rbac.authorization.k8s.io', 'ClusterRoleBinding', false, { returnsDeletedObject: false }),
  deployments: info('deployments', 'apps', 'Deployment', true, { shortNames: ['deploy'], status: true, categories: ['all'], returnsDeletedObject: false }),
  poddisruptionbudgets: info('poddisruptionbudgets', 'policy', 'PodDisruptionBudget', true, { shortNames: ['pdb'], status: true, returnsDeletedObject: false }),
  servicemonitors: crd('servicemonitors', MONITORING_GROUP, 'ServiceMonitor', true, { shortNames: ['smon'], status: true, categories: ['prometheus-operator'] }),
};

/** The group snapshot CRDs come with the snapshot CRDs (external-snapshotter installs both). */
const SNAPSHOT_RESOURCES: readonly ResourceName[] = [
  'volumesnapshots',
  'volumesnapshotcontents',
  'volumesnapshotclasses',
  'volumegroupsnapshots',
  'volumegroupsnapshotcontents',
  'volumegroupsnapshotclasses',
];

/** Resources of CRDs a cluster may lack: ServiceMonitors off unless asked for, the snapshot CRDs on unless told off. */
export const OPTIONAL_RESOURCES: ReadonlySet<ResourceName> = new Set(['servicemonitors', ...SNAPSHOT_RESOURCES]);

/** Which of the optional CRDs a server has installed. */
export interface InstalledCrds {
  serviceMonitors?: boolean;
  /** The CSI snapshot CRDs; default true (the local stack runs the snapshot controller). */
  snapshots?: boolean;
}

export const RESOURCE_NAMES = Object.keys(RESOURCES) as ResourceName[];

export function apiVersionOf(info: ResourceInfo): string {
  return info.group ? `${info.group}/${info.version}` : info.version;
}

/** What one server serves, in RESOURCES order: every resource but the optional ones it was not given. */
export type ServedResources = readonly ResourceInfo[];

export function servedResources(optional: InstalledCrds = {}): ServedResources {
  const extra = new Set<ResourceName>([...(optional.serviceMonitors ? ['servicemonitors' as const] : []), ...((optional.snapshots ?? true) ? SNAPSHOT_RESOURCES : [])]);
  return RESOURCE_NAMES.filter((name) => !OPTIONAL_RESOURCES.has(name) || extra.has(name)).map((name) => RESOURCES[name]);
}

/** A server's resources without the optional CRDs: what a plain cluster serves. */
export const DEFAULT_SERVED = servedResources();

/** The served resources of one API group ('' for core), for routing and discovery. */
export function groupResources(group: string, served: ServedResources = DEFAULT_SERVED): ResourceInfo[] {
  return served.filter((r) => r.group === group);
}

export function resourceInfo(resource: ResourceName): ResourceInfo {
  const found = RESOURCES[resource];
  if (!found) throw new Error(`unknown resource ${String(resource)}`);
  return found;
}
