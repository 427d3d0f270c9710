/**
 * Plain objects as the store would hold them, for the pure decision functions, and a
 * helper that strips the system fields for `store.create`.
 */
import type { KubeObject } from '../../../lib/local/kube/types.js';
import type {
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
  VolumeAttachment,
} from '../../../lib/local/controllers/index.js';

let counter = 0;

function meta(name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject['metadata'] {
  counter += 1;
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: String(counter),
    creationTimestamp: '2024-01-01T00:00:00Z',
    ...extra,
  };
}

export interface ClaimOptions {
  namespace?: string;
  storage?: string;
  accessModes?: string[];
  className?: string | null;
  selector?: PersistentVolumeClaim['spec']['selector'];
  volumeMode?: string;
  volumeName?: string;
  annotations?: Record<string, string>;
  finalizers?: string[];
  phase?: string;
  deleting?: boolean;
  uid?: string;
}

export function claim(name: string, o: ClaimOptions = {}): PersistentVolumeClaim {
  const spec: PersistentVolumeClaim['spec'] = {
    accessModes: o.accessModes ?? ['ReadWriteOnce'],
    resources: { requests: { storage: o.storage ?? '10Gi' } },
  };
  if (o.className !== undefined) spec.storageClassName = o.className;
  if (o.selector) spec.selector = o.selector;
  if (o.volumeMode) spec.volumeMode = o.volumeMode;
  if (o.volumeName) spec.volumeName = o.volumeName;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: meta(name, {
      namespace: o.namespace ?? 'default',
      ...(o.uid ? { uid: o.uid } : {}),
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.deleting ? { deletionTimestamp: '2024-01-02T00:00:00Z' } : {}),
    }),
    spec,
    status: { phase: o.phase ?? 'Pending' },
  };
}

export interface VolumeOptions {
  storage?: string;
  accessModes?: string[];
  className?: string;
  claimRef?: { namespace?: string; name: string; uid?: string };
  phase?: string;
  labels?: Record<string, string>;
  volumeMode?: string;
  deleting?: boolean;
  reclaimPolicy?: string;
  annotations?: Record<string, string>;
  finalizers?: string[];
  /** Adds nodeAffinity `topology.kubernetes.io/zone In [zone]`. */
  zone?: string;
  driver?: string;
  volumeHandle?: string;
}

export function volume(name: string, o: VolumeOptions = {}): PersistentVolume {
  const spec: PersistentVolume['spec'] = {
    capacity: { storage: o.storage ?? '10Gi' },
    accessModes: o.accessModes ?? ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: o.reclaimPolicy ?? 'Retain',
    csi: { driver: o.driver ?? 'ebs.csi.aws.com', volumeHandle: o.volumeHandle ?? `vol-${name}` },
  };
  if (o.className !== undefined) spec.storageClassName = o.className;
  if (o.volumeMode) spec.volumeMode = o.volumeMode;
  if (o.claimRef) {
    spec.claimRef = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', uid: '', ...o.claimRef };
  }
  if (o.zone) {
    spec.nodeAffinity = {
      required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [o.zone] }] }] },
    };
  }
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: meta(name, {
      ...(o.labels ? { labels: o.labels } : {}),
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.finalizers ? { finalizers: o.finalizers } : {}),
      ...(o.deleting ? { deletionTimestamp: '2024-01-02T00:00:00Z' } : {}),
    }),
    spec,
    status: { phase: o.phase ?? 'Available' },
  };
}

export interface ClassOptions {
  provisioner?: string;
  waitForFirstConsumer?: boolean;
  isDefault?: boolean;
  zones?: string[];
  created?: string;
}

export function storageClass(name: string, o: ClassOptions = {}): StorageClass {
  const sc: StorageClass = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: meta(name, {
      ...(o.isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}),
      ...(o.created ? { creationTimestamp: o.created } : {}),
    }),
    provisioner: o.provisioner ?? 'ebs.csi.aws.com',
    reclaimPolicy: 'Delete',
    volumeBindingMode: o.waitForFirstConsumer ? 'WaitForFirstConsumer' : 'Immediate',
  };
  if (o.zones) {
    sc.allowedTopologies = [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: o.zones }] }];
  }
  return sc;
}

export function node(name: string, o: { zone?: string; ready?: boolean; unschedulable?: boolean } = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: meta(name, {
      labels: { 'kubernetes.io/hostname': name, ...(o.zone ? { 'topology.kubernetes.io/zone': o.zone } : {}) },
    }),
    spec: o.unschedulable ? { unschedulable: true } : {},
    status: { conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  };
}

export function pod(
  name: string,
  o: { claims?: string[]; nodeName?: string; phase?: string; namespace?: string; deleting?: boolean } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(name, {
      namespace: o.namespace ?? 'default',
      ...(o.deleting ? { deletionTimestamp: '2024-01-02T00:00:00Z' } : {}),
    }),
    spec: {
      containers: [{ name: 'app', image: 'nginx:1.27' }],
      volumes: (o.claims ?? []).map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })),
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
    },
    status: { phase: o.phase ?? 'Pending' },
  };
}

export function attachment(
  name: string,
  o: { nodeName: string; volumeName: string; attacher?: string; attached?: boolean; deleting?: boolean },
): VolumeAttachment {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: meta(name, o.deleting ? { deletionTimestamp: '2024-01-02T00:00:00Z' } : {}),
    spec: { attacher: o.attacher ?? 'ebs.csi.aws.com', nodeName: o.nodeName, source: { persistentVolumeName: o.volumeName } },
    status: { attached: o.attached ?? false },
  };
}

/** A claim bound to a volume, both ways, as the PV controller leaves them. */
export function boundPair(name: string, o: { volumeName?: string; zone?: string; driver?: string } = {}) {
  const volumeName = o.volumeName ?? `pv-${name}`;
  const c = claim(name, {
    volumeName,
    phase: 'Bound',
    annotations: { 'pv.kubernetes.io/bind-completed': 'yes' },
  });
  const v = volume(volumeName, {
    claimRef: { name, uid: c.metadata.uid },
    phase: 'Bound',
    zone: o.zone,
    driver: o.driver,
  });
  return { claim: c, volume: v };
}

/** The object without the fields the store assigns, ready for `store.create`. */
export function forCreate<T extends KubeObject>(object: T): T {
  const copy = structuredClone(object);
  const m = copy.metadata as Partial<KubeObject['metadata']>;
  delete m.uid;
  delete m.resourceVersion;
  delete m.creationTimestamp;
  delete m.deletionTimestamp;
  return copy;
}
