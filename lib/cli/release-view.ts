/**
 * What `cluster release` reads from the cluster, as schemas: the storage objects whose marks it
 * removes and checks (ClusterView), and the evidence of a running forwarder (ForwarderEvidence).
 * Every other field passes, whatever the cluster's version. client-node hands timestamps over
 * as Date objects and the API as strings; both are read as RFC 3339 strings.
 */
import * as z from 'zod';

const Timestamp = z.union([z.string(), z.date()]).transform((t) => (typeof t === 'string' ? t : t.toISOString()));
const StringMap = z.record(z.string(), z.string());

const MetaSchema = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().nullish(),
  uid: z.string().min(1),
  deletionTimestamp: Timestamp.nullish(),
  finalizers: z.array(z.string()).nullish(),
  annotations: StringMap.nullish(),
  labels: StringMap.nullish(),
});

export const ReleaseClaimSchema = z.looseObject({
  metadata: MetaSchema.extend({ namespace: z.string().min(1) }),
  spec: z.looseObject({ volumeName: z.string().nullish(), volumeMode: z.string().nullish() }).default({}),
});
export type ReleaseClaim = z.infer<typeof ReleaseClaimSchema>;

const ZoneTermSchema = z.looseObject({
  matchExpressions: z.array(z.looseObject({ key: z.string(), operator: z.string(), values: z.array(z.string()).nullish() })).nullish(),
});

export const ReleasePvSchema = z.looseObject({
  metadata: MetaSchema,
  spec: z
    .looseObject({
      csi: z.looseObject({ driver: z.string(), volumeHandle: z.string(), fsType: z.string().nullish() }).nullish(),
      awsElasticBlockStore: z.looseObject({ volumeID: z.string(), fsType: z.string().nullish() }).nullish(),
      claimRef: z.looseObject({ namespace: z.string().nullish(), name: z.string().nullish(), uid: z.string().nullish() }).nullish(),
      persistentVolumeReclaimPolicy: z.string().nullish(),
      volumeMode: z.string().nullish(),
      nodeAffinity: z.looseObject({ required: z.looseObject({ nodeSelectorTerms: z.array(ZoneTermSchema) }).nullish() }).nullish(),
    })
    .default({}),
  status: z.looseObject({ phase: z.string().nullish() }).nullish(),
});
export type ReleasePv = z.infer<typeof ReleasePvSchema>;

export const ReleaseAttachmentSchema = z.looseObject({
  metadata: MetaSchema,
  spec: z.looseObject({
    attacher: z.string(),
    nodeName: z.string(),
    source: z.looseObject({ persistentVolumeName: z.string().nullish() }).default({}),
  }),
  status: z.looseObject({ attached: z.boolean().nullish() }).nullish(),
});
export type ReleaseAttachment = z.infer<typeof ReleaseAttachmentSchema>;

export const ReleaseCsiNodeSchema = z.looseObject({
  metadata: z.looseObject({ name: z.string().min(1) }),
  spec: z.looseObject({ drivers: z.array(z.looseObject({ name: z.string(), nodeID: z.string().nullish() })).nullish() }).default({}),
});
export type ReleaseCsiNode = z.infer<typeof ReleaseCsiNodeSchema>;

/** A VolumeSnapshotContent: only its marks are read. */
export const ReleaseSnapshotContentSchema = z.looseObject({ metadata: MetaSchema });
export type ReleaseSnapshotContent = z.infer<typeof ReleaseSnapshotContentSchema>;

/** The storage objects of the cluster, as read at one moment. */
export interface ClusterView {
  claims: ReleaseClaim[];
  volumes: ReleasePv[];
  attachments: ReleaseAttachment[];
  csiNodes: ReleaseCsiNode[];
  /** Undefined when the API serves no VolumeSnapshotContents (no snapshot CRDs). */
  snapshotContents?: ReleaseSnapshotContent[];
}

export const LeaseSchema = z.looseObject({
  metadata: z.looseObject({ managedFields: z.array(z.looseObject({ time: Timestamp.nullish() })).nullish() }).default({}),
  spec: z
    .looseObject({
      holderIdentity: z.string().nullish(),
      leaseDurationSeconds: z.number().nullish(),
      acquireTime: Timestamp.nullish(),
      renewTime: Timestamp.nullish(),
    })
    .default({}),
});

/** The forwarder's Lease, the times in it and the API server's own of its last writes. */
export interface LeaseEvidence {
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** renewTime and acquireTime (the holder's clock), managedFields times (the API server's). */
  times: string[];
}

/** Where an object of the forwarder lives; the chart names them after the Helm release, in its namespace. */
const PlaceMetaSchema = z.looseObject({ name: z.string().min(1), namespace: z.string().nullish(), annotations: StringMap.nullish(), labels: StringMap.nullish() });

export const DeploymentSchema = z.looseObject({
  metadata: z.looseObject({ annotations: StringMap.nullish() }).default({}),
  spec: z.looseObject({ replicas: z.number().nullish() }).default({}),
  status: z.looseObject({ replicas: z.number().nullish(), readyReplicas: z.number().nullish() }).nullish(),
});

/** A Deployment as listed across namespaces: its place too. */
export const ListedDeploymentSchema = z.looseObject({ metadata: PlaceMetaSchema });

export const PodSchema = z.looseObject({
  metadata: z.looseObject({ name: z.string(), namespace: z.string().nullish(), labels: StringMap.nullish(), deletionTimestamp: Timestamp.nullish() }),
  status: z.looseObject({ phase: z.string().nullish() }).nullish(),
});

export const ConfigMapSchema = z.looseObject({
  metadata: z.looseObject({ annotations: StringMap.nullish() }).default({}),
  data: StringMap.nullish(),
});

/** A ConfigMap as listed across namespaces: its place, labels and data. */
export const ListedConfigMapSchema = z.looseObject({ metadata: PlaceMetaSchema, data: StringMap.nullish() });

/** Helm's marks on every object of a release (Helm 3.2 and later). */
export const HELM_RELEASE_ANNOTATIONS = { name: 'meta.helm.sh/release-name', namespace: 'meta.helm.sh/release-namespace' } as const;

export interface HelmRelease {
  name: string;
  namespace: string;
}

/** Where a forwarder's objects are: the namespace and the name its Deployment, ConfigMap and Lease share. */
export interface ForwarderPlace {
  namespace: string;
  name: string;
}

/** What the cluster shows of one forwarder, read live, with the API server's time of the read. */
export interface ForwarderEvidence {
  /** Where it is; default the manifests' and the default release's `volhook-system/volhook-forwarder`. */
  where?: ForwarderPlace;
  /** The Lease's name, when it is not the place's (the ConfigMap's `VOLHOOK_LEASE_NAME`). */
  leaseName?: string;
  /** The `Date` header of the API server's answer to the Lease read (RFC 7231), if it sent one. */
  serverDate?: string;
  lease?: LeaseEvidence;
  deployment: { kind: 'not-served' } | { kind: 'absent' } | { kind: 'present'; replicas: number; readyReplicas: number; helm?: HelmRelease };
  /** The forwarder's pods (label app.kubernetes.io/name=volhook-forwarder), not yet finished. */
  pods: Array<{ name: string; phase: string }>;
  /** Its ConfigMap: the cluster id it configures, and the Helm release it belongs to. */
  configMap?: { clusterId?: string; helm?: HelmRelease };
}

/** The Helm release named by an object's annotations, if any. */
export function helmReleaseOf(annotations: Record<string, string> | null | undefined, fallbackNamespace: string): HelmRelease | undefined {
  const name = annotations?.[HELM_RELEASE_ANNOTATIONS.name];
  return name ? { name, namespace: annotations?.[HELM_RELEASE_ANNOTATIONS.namespace] || fallbackNamespace } : undefined;
}
