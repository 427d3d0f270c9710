/**
 * Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), so that
 * `kubectl get pvc` shows STATUS, VOLUME and CAPACITY as on a real cluster instead of only
 * NAME and AGE. Columns follow kube-apiserver's printers for these kinds.
 */
import { isObject, type JsonObject } from './json.js';
import type { KubeObject, ResourceName } from './types.js';

interface Column {
  name: string;
  type?: string;
  format?: string;
  priority?: number;
  cell: (o: KubeObject, now: Date) => string | number | boolean;
}

const obj = (value: unknown): JsonObject => (isObject(value) ? value : {});
const str = (value: unknown, fallback = ''): string => (value === undefined || value === null || value === '' ? fallback : String(value));

/** `duration.HumanDuration` from apimachinery: 45s, 3m12s, 25m, 5h10m, 3d4h, 2y. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

function since(timestamp: unknown, now: Date): string {
  if (typeof timestamp !== 'string') return '<unknown>';
  return humanDuration(now.getTime() - Date.parse(timestamp));
}

const MODE_SHORT: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
const accessModes = (modes: unknown): string => (Array.isArray(modes) ? modes.map((m) => MODE_SHORT[String(m)] ?? String(m)).join(',') : '');
const phase = (o: KubeObject): string => (o.metadata.deletionTimestamp ? 'Terminating' : str(obj(o.status).phase));

const name: Column = { name: 'Name', format: 'name', cell: (o) => o.metadata.name };
const age: Column = { name: 'Age', cell: (o, now) => since(o.metadata.creationTimestamp, now) };
const vac: Column = { name: 'VolumeAttributesClass', cell: (o) => str(obj(o.spec).volumeAttributesClassName, '<unset>') };

function classOf(o: KubeObject): string {
  return str(o.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? obj(o.spec).storageClassName);
}

function nodeStatus(o: KubeObject): string {
  const conditions = obj(o.status).conditions;
  const ready = Array.isArray(conditions) ? conditions.map(obj).find((c) => c.type === 'Ready') : undefined;
  const status = !ready ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady';
  return obj(o.spec).unschedulable === true ? `${status},SchedulingDisabled` : status;
}

function isDefaultClass(o: KubeObject): boolean {
  const a = o.metadata.annotations ?? {};
  return a['storageclass.kubernetes.io/is-default-class'] === 'true' || a['storageclass.beta.kubernetes.io/is-default-class'] === 'true';
}

/** A CRD printer column of type boolean/integer shows `<none>`-less empty cells when unset. */
const optional = (value: unknown): string | number | boolean => (value === undefined || value === null ? '' : (value as string | number | boolean));

const COLUMNS: Partial<Record<ResourceName, Column[]>> = {
  // additionalPrinterColumns of the external-snapshotter v8 CRDs.
  volumesnapshots: [
    name,
    { name: 'ReadyToUse', type: 'boolean', cell: (o) => optional(obj(o.status).readyToUse) },
    { name: 'SourcePVC', cell: (o) => str(obj(obj(o.spec).source).persistentVolumeClaimName) },
    { name: 'SourceSnapshotContent', cell: (o) => str(obj(obj(o.spec).source).volumeSnapshotContentName) },
    { name: 'RestoreSize', cell: (o) => str(obj(o.status).restoreSize) },
    { name: 'SnapshotClass', cell: (o) => str(obj(o.spec).volumeSnapshotClassName) },
    { name: 'SnapshotContent', cell: (o) => str(obj(o.status).boundVolumeSnapshotContentName) },
    { name: 'CreationTime', type: 'date', cell: (o, now) => (typeof obj(o.status).creationTime === 'string' ? since(obj(o.status).creationTime, now) : '') },
    age,
  ],
  volumesnapshotcontents: [
    name,
    { name: 'ReadyToUse', type: 'boolean', cell: (o) => optional(obj(o.status).readyToUse) },
    { name: 'RestoreSize', type: 'integer', format: 'int64', cell: (o) => optional(obj(o.status).restoreSize) },
    { name: 'DeletionPolicy', cell: (o) => str(obj(o.spec).deletionPolicy) },
    { name: 'Driver', cell: (o) => str(obj(o.spec).driver) },
    { name: 'VolumeSnapshotClass', cell: (o) => str(obj(o.spec).volumeSnapshotClassName) },
    { name: 'VolumeSnapshot', cell: (o) => str(obj(obj(o.spec).volumeSnapshotRef).name) },
    { name: 'VolumeSnapshotNamespace', cell: (o) => str(obj(obj(o.spec).volumeSnapshotRef).namespace) },
    age,
  ],
  volumegroupsnapshots: [
    name,
    { name: 'ReadyToUse', type: 'boolean', cell: (o) => optional(obj(o.status).readyToUse) },
    { name: 'VolumeGroupSnapshotClass', cell: (o) => str(obj(o.spec).volumeGroupSnapshotClassName) },
    { name: 'VolumeGroupSnapshotContent', cell: (o) => str(obj(o.status).boundVolumeGroupSnapshotContentName) },
    { name: 'CreationTime', type: 'date', cell: (o, now) => (typeof obj(o.status).creationTime === 'string' ? since(obj(o.status).creationTime, now) : '') },
    age,
  ],
  volumegroupsnapshotcontents: [
    name,
    { name: 'ReadyToUse', type: 'boolean', cell: (o) => optional(obj(o.status).readyToUse) },
    { name: 'DeletionPolicy', cell: (o) => str(obj(o.spec).deletionPolicy) },
    { name: 'Driver', cell: (o) => str(obj(o.spec).driver) },
    { name: 'VolumeGroupSnapshotClass', cell: (o) => str(obj(o.spec).volumeGroupSnapshotClassName) },
    { name: 'VolumeGroupSnapshotNamespace', cell: (o) => str(obj(obj(o.spec).volumeGroupSnapshotRef).namespace) },
    { name: 'VolumeGroupSnapshot', cell: (o) => str(obj(obj(o.spec).volumeGroupSnapshotRef).name) },
    age,
  ],
  volumegroupsnapshotclasses: [
    name,
    { name: 'Driver', cell: (o) => str(o.driver) },
    { name: 'DeletionPolicy', cell: (o) => str(o.deletionPolicy) },
    age,
  ],
  volumesnapshotclasses: [
    name,
    { name: 'Driver', cell: (o) => str(o.driver) },
    { name: 'DeletionPolicy', cell: (o) => str(o.deletionPolicy) },
    age,
  ],
  persistentvolumeclaims: [
    name,
    { name: 'Status', cell: phase },
    { name: 'Volume', cell: (o) => str(obj(o.spec).volumeName) },
    { name: 'Capacity', cell: (o) => str(obj(obj(o.status).capacity).storage) },
    { name: 'Access Modes', cell: (o) => accessModes(obj(o.status).accessModes) },
    { name: 'StorageClass', cell: classOf },
    vac,
    age,
    { name: 'VolumeMode', priority: 1, cell: (o) => str(obj(o.spec).volumeMode) },
  ],
  persistentvolumes: [
    name,
    { name: 'Capacity', cell: (o) => str(obj(obj(o.spec).capacity).storage) },
    { name: 'Access Modes', cell: (o) => accessModes(obj(o.spec).accessModes) },
    { name: 'Reclaim Policy', cell: (o) => str(obj(o.spec).persistentVolumeReclaimPolicy) },
    { name: 'Status', cell: phase },
    { name: 'Claim', cell: (o) => { const c = obj(obj(o.spec).claimRef); return c.name ? `${str(c.namespace)}/${str(c.name)}` : ''; } },
    { name: 'StorageClass', cell: classOf },
    vac,
    { name: 'Reason', cell: (o) => str(obj(o.status).reason) },
    age,
    { name: 'VolumeMode', priority: 1, cell: (o) => str(obj(o.spec).volumeMode) },
  ],
  storageclasses: [
    { ...name, cell: (o) => (isDefaultClass(o) ? `${o.metadata.name} (default)` : o.metadata.name) },
    { name: 'Provisioner', cell: (o) => str(o.provisioner) },
    { name: 'ReclaimPolicy', cell: (o) => str(o.reclaimPolicy) },
    { name: 'VolumeBindingMode', cell: (o) => str(o.volumeBindingMode) },
    { name: 'AllowVolumeExpansion', type: 'boolean', cell: (o) => o.allowVolumeExpansion === true },
    age,
  ],
  volumeattachments: [
    name,
    { name: 'Attacher', cell: (o) => str(obj(o.spec).attacher) },
    { name: 'PV', cell: (o) => str(obj(obj(o.spec).source).persistentVolumeName) },
    { name: 'Node', cell: (o) => str(obj(o.spec).nodeName) },
    { name: 'Attached', type: 'boolean', cell: (o) => obj(o.status).attached === true },
    age,
  ],
  nodes: [
    name,
    { name: 'Status', cell: nodeStatus },
    {
      name: 'Roles',
      cell: (o) => Object.keys(o.metadata.labels ?? {}).filter((l) => l.startsWith('node-role.kubernetes.io/')).map((l) => l.slice(24)).join(',') || '<none>',
    },
    age,
    { name: 'Version', cell: (o) => str(obj(obj(o.status).nodeInfo).kubeletVersion) },
  ],
  pods: [
    name,
    { name: 'Ready', cell: (o) => { const s = obj(o.status).containerStatuses; const all = Array.isArray(obj(o.spec).containers) ? (obj(o.spec).containers as unknown[]).length : 0; return `${Array.isArray(s) ? s.filter((c) => obj(c).ready === true).length : 0}/${all}`; } },
    { name: 'Status', cell: phase },
    { name: 'Restarts', type: 'string', cell: () => '0' },
    age,
    { name: 'Node', priority: 1, cell: (o) => str(obj(o.spec).nodeName, '<none>') },
  ],
  namespaces: [name, { name: 'Status', cell: phase }, age],
  events: [
    { name: 'Last Seen', cell: (o, now) => since(o.lastTimestamp ?? o.eventTime ?? o.metadata.creationTimestamp, now) },
    { name: 'Type', cell: (o) => str(o.type) },
    { name: 'Reason', cell: (o) => str(o.reason) },
    { name: 'Object', cell: (o) => { const i = obj(o.involvedObject); return `${str(i.kind).toLowerCase()}/${str(i.name)}`; } },
    { name: 'Message', cell: (o) => str(o.message) },
  ],
  csinodes: [name, { name: 'Drivers', type: 'integer', cell: (o) => (Array.isArray(obj(o.spec).drivers) ? (obj(o.spec).drivers as unknown[]).length : 0) }, age],
  volumeattributesclasses: [name, { name: 'DriverName', cell: (o) => str(o.driverName) }, age],
  csidrivers: [
    name,
    { name: 'AttachRequired', type: 'boolean', cell: (o) => obj(o.spec).attachRequired === true },
    { name: 'PodInfoOnMount', type: 'boolean', cell: (o) => obj(o.spec).podInfoOnMount === true },
    { name: 'Modes', cell: (o) => (Array.isArray(obj(o.spec).volumeLifecycleModes) ? (obj(o.spec).volumeLifecycleModes as unknown[]).join(',') : '') },
    age,
  ],
};

const count = (value: unknown): number => (Array.isArray(value) ? value.length : isObject(value) ? Object.keys(value).length : 0);
const orNone = (value: string): string => value || '<none>';
const servicePorts = (o: KubeObject): string =>
  orNone(
    (Array.isArray(obj(o.spec).ports) ? (obj(o.spec).ports as unknown[]).map(obj) : [])
      .map((p) => `${str(p.port)}${p.nodePort ? `:${str(p.nodePort)}` : ''}/${str(p.protocol, 'TCP')}`)
      .join(','),
  );
const roleOf = (o: KubeObject): string => `${str(obj(o.roleRef).kind)}/${str(obj(o.roleRef).name)}`;
const subjects = (kind: string) => (o: KubeObject): string =>
  (Array.isArray(o.subjects) ? (o.subjects as unknown[]).map(obj) : [])
    .filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${str(s.namespace)}/${str(s.name)}` : str(s.name)))
    .join(', ');
const createdAt: Column = { name: 'Created At', type: 'date', cell: (o) => str(o.metadata.creationTimestamp) };
const bindingColumns: Column[] = [
  name,
  { name: 'Role', cell: roleOf },
  age,
  { name: 'Users', priority: 1, cell: subjects('User') },
  { name: 'Groups', priority: 1, cell: subjects('Group') },
  { name: 'ServiceAccounts', priority: 1, cell: subjects('ServiceAccount') },
];

// Printers of the configuration and workload kinds (pkg/printers/internalversion).
Object.assign(COLUMNS, {
  serviceaccounts: [name, { name: 'Secrets', type: 'integer', cell: (o) => count(o.secrets) }, age],
  configmaps: [name, { name: 'Data', type: 'integer', cell: (o) => count(o.data) + count(o.binaryData) }, age],
  secrets: [name, { name: 'Type', cell: (o) => str(o.type) }, { name: 'Data', type: 'integer', cell: (o) => count(o.data) }, age],
  services: [
    name,
    { name: 'Type', cell: (o) => str(obj(o.spec).type) },
    { name: 'Cluster-IP', cell: (o) => orNone(str(obj(o.spec).clusterIP)) },
    { name: 'External-IP', cell: () => '<none>' },
    { name: 'Port(s)', cell: servicePorts },
    age,
    { name: 'Selector', priority: 1, cell: (o) => orNone(Object.entries(obj(obj(o.spec).selector)).map(([k, v]) => `${k}=${str(v)}`).join(',')) },
  ],
  deployments: [
    name,
    { name: 'Ready', cell: (o) => `${str(obj(o.status).readyReplicas, '0')}/${str(obj(o.spec).replicas, '0')}` },
    { name: 'Up-to-date', type: 'integer', cell: (o) => Number(obj(o.status).updatedReplicas ?? 0) },
    { name: 'Available', type: 'integer', cell: (o) => Number(obj(o.status).availableReplicas ?? 0) },
    age,
  ],
  poddisruptionbudgets: [
    name,
    { name: 'Min Available', cell: (o) => str(obj(o.spec).minAvailable, 'N/A') },
    { name: 'Max Unavailable', cell: (o) => str(obj(o.spec).maxUnavailable, 'N/A') },
    { name: 'Allowed Disruptions', type: 'integer', cell: (o) => Number(obj(o.status).disruptionsAllowed ?? 0) },
    age,
  ],
  roles: [name, createdAt],
  clusterroles: [name, createdAt],
  rolebindings: bindingColumns,
  clusterrolebindings: bindingColumns,
} satisfies Partial<Record<ResourceName, Column[]>>);

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** A `meta.k8s.io/v1` Table of `objects`, one row each. */
export function toTable(resource: ResourceName, objects: KubeObject[], options: { resourceVersion?: string; includeObject?: IncludeObject; now?: Date } = {}): object {
  const columns = COLUMNS[resource] ?? [name, age];
  const now = options.now ?? new Date();
  const include = options.includeObject ?? 'Metadata';
  const rows = objects.map((o) => {
    const row: JsonObject = { cells: columns.map((c) => c.cell(o, now)) };
    if (include === 'Object') row.object = o;
    if (include === 'Metadata') row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: options.resourceVersion ? { resourceVersion: options.resourceVersion } : {},
    columnDefinitions: columns.map((c) => ({ name: c.name, type: c.type ?? 'string', format: c.format ?? '', description: c.name, priority: c.priority ?? 0 })),
    rows,
  };
}
