/**
 * The drop-in matrix: StorageClasses and claims each provisioned once by volhook and once by
 * the reference EBS CSI controller stack, and what is compared of the outcome (outcome/diff
 * below: pure). Every class binds Immediate, so no pod is needed; the zone of a class without
 * allowedTopologies is the provisioner's free choice and is compared as `<zone>`.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass, CoreV1Event } from '@kubernetes/client-node';
import type { Volume } from '../../lib/local/ec2/index.js';

export const NS = 'dropin';
export const PINNED_ZONE = 'us-east-1b';
const KMS_KEY = 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

interface Case {
  claim: string;
  storageClass: V1StorageClass;
  volumeMode?: 'Block' | 'Filesystem';
  size: string;
  /** A claim the provisioner must refuse: it stays Pending. */
  refused?: boolean;
  pinnedZone?: string;
}

const sc = (name: string, fields: Omit<V1StorageClass, 'metadata' | 'apiVersion' | 'kind' | 'provisioner'> & { provisioner?: string }): V1StorageClass => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name },
  provisioner: 'ebs.csi.aws.com',
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'Immediate',
  ...fields,
});

export const CASES: Case[] = [
  { claim: 'gp3-tuned', size: '10Gi', storageClass: sc('dropin-gp3-tuned', { parameters: { type: 'gp3', iops: '4000', throughput: '250', 'csi.storage.k8s.io/fstype': 'xfs' }, mountOptions: ['noatime'] }) },
  { claim: 'io2-per-gb', size: '10Gi', storageClass: sc('dropin-io2-per-gb', { parameters: { type: 'io2', iopsPerGB: '50' }, reclaimPolicy: 'Retain' }) },
  { claim: 'encrypted-kms', size: '4Gi', storageClass: sc('dropin-encrypted-kms', { parameters: { type: 'gp3', encrypted: 'true', kmsKeyId: KMS_KEY } }) },
  {
    claim: 'tagged',
    size: '4Gi',
    storageClass: sc('dropin-tagged', { parameters: { type: 'gp3', tagSpecification_1: 'team=storage', tagSpecification_2: 'owner={{ .PVCNamespace }}/{{ .PVCName }}' } }),
  },
  {
    claim: 'zonal',
    size: '4Gi',
    pinnedZone: PINNED_ZONE,
    storageClass: sc('dropin-zonal', { parameters: { type: 'gp3' }, allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: [PINNED_ZONE] }] }] }),
  },
  { claim: 'block', size: '4Gi', volumeMode: 'Block', storageClass: sc('dropin-block', { parameters: { type: 'gp3' } }) },
  { claim: 'in-tree', size: '4Gi', storageClass: sc('dropin-in-tree', { provisioner: 'kubernetes.io/aws-ebs', parameters: { type: 'gp3' } }) },
  { claim: 'refused', size: '4Gi', refused: true, storageClass: sc('dropin-refused', { parameters: { type: 'gp3', nosuchkey: 'x' } }) },
];

export function claimOf(c: Case): V1PersistentVolumeClaim {
  return {
    metadata: { name: c.claim, namespace: NS },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: c.storageClass.metadata!.name!,
      volumeMode: c.volumeMode ?? 'Filesystem',
      resources: { requests: { storage: c.size } },
    },
  };
}

/** What one stack made of one claim, every field as comparable text. */
export type Outcome = Record<string, string>;

export interface Observed {
  claim: V1PersistentVolumeClaim;
  pv?: V1PersistentVolume;
  volume?: Volume;
  events: CoreV1Event[];
}

const text = (v: unknown) => (v === undefined ? '-' : JSON.stringify(v));

/** Pure: the comparable fields, with the names and ids that differ by nature (PV name, volume id, a free zone) replaced. */
export function outcome(c: Case, o: Observed): Outcome {
  const pvName = o.pv?.metadata?.name;
  const zone = o.volume?.zone;
  const norm = (s: string) => {
    let out = s;
    if (pvName) out = out.split(pvName).join('<pv>');
    if (o.volume) out = out.split(o.volume.id).join('<vol>');
    if (zone && !c.pinnedZone) out = out.split(zone).join('<zone>');
    return out.replace(/\d+-\d+-ebs\.csi\.aws\.com/g, '<identity>');
  };
  const f: Outcome = {};
  const put = (k: string, v: unknown) => void (f[k] = norm(text(v)));
  const v = o.volume;
  put('volume.size', v?.size);
  put('volume.type', v?.type);
  put('volume.iops', v?.iops);
  put('volume.throughput', v?.throughput);
  put('volume.encrypted', v?.encrypted);
  put('volume.kmsKeyId', v?.kmsKeyId);
  put('volume.zone', v?.zone);
  put('volume.multiAttach', v?.multiAttach);
  for (const t of v?.tags ?? []) put(`tag ${t.key}`, t.value);
  const spec = o.pv?.spec;
  put('pv.source', spec === undefined ? undefined : spec.csi ? `csi ${spec.csi.driver}` : spec.awsElasticBlockStore ? 'awsElasticBlockStore' : 'other');
  put('pv.volumeAttributes', spec?.csi?.volumeAttributes);
  put('pv.fsType', spec?.csi?.fsType ?? spec?.awsElasticBlockStore?.fsType);
  put('pv.nodeAffinity', spec?.nodeAffinity);
  put('pv.volumeMode', spec?.volumeMode);
  put('pv.mountOptions', spec?.mountOptions);
  put('pv.reclaimPolicy', spec?.persistentVolumeReclaimPolicy);
  put('pv.accessModes', spec?.accessModes);
  put('pv.capacity', spec?.capacity);
  put('pv.provisionedBy', o.pv?.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']);
  put('claim.phase', o.claim.status?.phase);
  put('claim.capacity', o.claim.status?.capacity);
  put('claim.accessModes', o.claim.status?.accessModes);
  put('events.reasons', [...new Set(o.events.map((e) => `${e.type} ${e.reason}`))].sort());
  return f;
}

export interface Difference {
  claim: string;
  field: string;
  volhook: string;
  ebsCsi: string;
}

/** Pure: every field (of either side) whose text differs. */
export function differences(volhook: Record<string, Outcome>, ebsCsi: Record<string, Outcome>): Difference[] {
  const out: Difference[] = [];
  for (const claim of [...new Set([...Object.keys(volhook), ...Object.keys(ebsCsi)])].sort()) {
    const a = volhook[claim] ?? {};
    const b = ebsCsi[claim] ?? {};
    for (const field of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const va = a[field] ?? '(absent)';
      const vb = b[field] ?? '(absent)';
      if (va !== vb) out.push({ claim, field, volhook: va, ebsCsi: vb });
    }
  }
  return out;
}
