/**
 * `cluster release`'s pure parts: volhook's marks -> what --apply removes and which claims hold
 * it back; the EBS objects -> what the CSI sidecars would find wrong (and which of it release
 * fixes); the forwarder's Lease, Deployment, pods and ConfigMap -> whether one may be running.
 */
import { describe, expect, it } from 'vitest';
import {
  checkForSidecars,
  claimProtection,
  IN_FLIGHT_SECONDS,
  isVolhookKey,
  judgeForwarder,
  planMarks,
  planRelease,
  type ClusterView,
  type ForwarderEvidence,
} from '../../lib/cli/index.js';

const UID = '00000000-0000-4000-8000-000000000001';
const PV = `pvc-${UID}`;
const VOL = 'vol-0123456789abcdef0';
const PROTECTION = 'volhook.io/provisioning-protection';
const PROVISIONER = 'external-provisioner.volume.kubernetes.io/finalizer';
const ATTACHER = 'external-attacher/ebs-csi-aws-com';
const NODE_ID = 'csi.alpha.kubernetes.io/node-id';
const DELETED = '2026-01-01T00:00:00Z';

type Claim = ClusterView['claims'][number];
type Pv = ClusterView['volumes'][number];
type Va = ClusterView['attachments'][number];

const claim = (over: { uid?: string; volumeName?: string; finalizers?: string[]; annotations?: Record<string, string>; deletionTimestamp?: string } = {}): Claim => ({
  metadata: {
    name: 'data',
    namespace: 'shop',
    uid: over.uid ?? UID,
    finalizers: over.finalizers ?? ['kubernetes.io/pvc-protection'],
    annotations: over.annotations ?? { 'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com' },
    ...(over.deletionTimestamp && { deletionTimestamp: over.deletionTimestamp }),
  },
  spec: over.volumeName ? { volumeName: over.volumeName } : {},
});

/** A PV as external-provisioner (and volhook) writes it for the claim, Bound. */
const csiPv = (over: Partial<{ finalizers: string[]; annotations: Record<string, string>; policy: string; handle: string; fsType: string | null; zone: boolean; deletionTimestamp: string; volumeMode: string }> = {}): Pv => ({
  metadata: {
    name: PV,
    uid: 'pv-uid-1',
    finalizers: over.finalizers ?? ['kubernetes.io/pv-protection', PROVISIONER],
    annotations: over.annotations ?? { 'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com' },
    ...(over.deletionTimestamp && { deletionTimestamp: over.deletionTimestamp }),
  },
  spec: {
    csi: { driver: 'ebs.csi.aws.com', volumeHandle: over.handle ?? VOL, ...(over.fsType !== null && { fsType: over.fsType ?? 'ext4' }) },
    claimRef: { namespace: 'shop', name: 'data', uid: UID },
    persistentVolumeReclaimPolicy: over.policy ?? 'Delete',
    ...(over.volumeMode && { volumeMode: over.volumeMode }),
    ...(over.zone !== false && {
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-east-1a'] }] }] } },
    }),
  },
  status: { phase: 'Bound' },
});

const va = (over: Partial<{ attached: boolean; finalizers: string[]; annotations: Record<string, string>; deletionTimestamp: string; pv: string }> = {}): Va => ({
  metadata: {
    name: 'csi-abc',
    uid: 'va-uid-1',
    finalizers: over.finalizers ?? [ATTACHER],
    annotations: over.annotations ?? { [NODE_ID]: 'i-0123456789abcdef0' },
    ...(over.deletionTimestamp && { deletionTimestamp: over.deletionTimestamp }),
  },
  spec: { attacher: 'ebs.csi.aws.com', nodeName: 'node-a', source: { persistentVolumeName: over.pv ?? PV } },
  status: { attached: over.attached ?? true },
});

const csiNode = { metadata: { name: 'node-a' }, spec: { drivers: [{ name: 'ebs.csi.aws.com', nodeID: 'i-0123456789abcdef0' }] } };
const pvWithAttacher = () => csiPv({ finalizers: ['kubernetes.io/pv-protection', PROVISIONER, ATTACHER] });
const view = (over: Partial<ClusterView> = {}): ClusterView => ({ claims: [claim({ volumeName: PV })], volumes: [pvWithAttacher()], attachments: [va()], csiNodes: [csiNode], ...over });

describe('planMarks: volhook marks -> what --apply removes, and the claims that hold it back', () => {
  it('a cluster as volhook leaves it settled -> no marks, no held claims', () => {
    expect(planMarks(view())).toEqual({ marks: [], held: [] });
  });

  it("the sidecars' own names volhook writes (provisioner, attacher, snapshot finalizers; node-id, provisioned-by, being-created) -> none is a mark", () => {
    const content = {
      metadata: {
        name: 'snapcontent-1',
        uid: 'vsc-1',
        finalizers: ['snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection'],
        annotations: { 'snapshot.storage.kubernetes.io/volumesnapshot-being-created': 'yes' },
      },
    };
    const pv = csiPv({ finalizers: ['kubernetes.io/pv-protection', PROVISIONER, ATTACHER] });
    expect(planMarks(view({ volumes: [pv], snapshotContents: [content] }))).toEqual({ marks: [], held: [] });
  });

  it.each<[string, Claim, ReadonlyArray<Pv>, boolean, RegExp]>([
    ['its PV exists (volhook stopped between writing the PV and dropping the finalizer)', claim({ finalizers: [PROTECTION] }), [csiPv()], true, /PV pvc-.* exists/],
    ['bound to its own PV, the PV gone (Lost)', claim({ volumeName: PV, finalizers: [PROTECTION] }), [], true, /bound to pvc-/],
    ['pending, no PV (CreateVolume may be in flight)', claim({ finalizers: [PROTECTION] }), [], false, /volhook is provisioning it: a disk it asked EC2 for may exist or still land/],
    ['being deleted, no PV (volhook has to delete its disk)', claim({ finalizers: [PROTECTION], deletionTimestamp: DELETED }), [], false, /is being deleted and no PV .* exists: volhook has yet to delete the disk/],
    ['bound to another PV, no PV of its own', claim({ volumeName: 'static-1', finalizers: [PROTECTION] }), [], false, /is bound to another PV \(static-1\)/],
    ['being deleted, its PV exists (the PV\'s policy owns the disk)', claim({ finalizers: [PROTECTION], deletionTimestamp: DELETED }), [csiPv()], true, /PV pvc-.* exists/],
  ])('claim protection, %s -> settled %s', (_what, pvc, volumes, settled, why) => {
    const verdict = claimProtection(pvc, new Set(volumes.map((pv) => pv.metadata.name)));
    expect(verdict.settled).toBe(settled);
    expect(verdict.why).toMatch(why);
    const plan = planMarks(view({ claims: [pvc], volumes: [...volumes], attachments: [] }));
    if (settled) {
      expect(plan.marks).toEqual([
        { target: { kind: 'PersistentVolumeClaim', namespace: 'shop', name: 'data', uid: UID }, type: 'finalizer', key: PROTECTION, why: verdict.why },
      ]);
      expect(plan.held).toEqual([]);
    } else {
      expect(plan.marks).toEqual([]);
      expect(plan.held).toEqual([{ namespace: 'shop', name: 'data', uid: UID, why: verdict.why }]);
    }
  });

  it('any finalizer or annotation in volhook.io (or a subdomain) on any kind -> listed, sorted by kind, object, key; others left', () => {
    const plan = planMarks(
      view({
        claims: [claim({ volumeName: PV, annotations: { 'volhook.io/b': '1', 'example.com/x': '1' } })],
        volumes: [csiPv({ annotations: { 'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com', 'forwarder.volhook.io/seen': 'x' } })],
        attachments: [va({ finalizers: [ATTACHER, 'volhook.io/old'] })],
        snapshotContents: [{ metadata: { name: 'snapcontent-1', uid: 'vsc-1', annotations: { 'volhook.io/a': '' } } }],
      }),
    );
    expect(plan.marks.map((m) => `${m.target.kind} ${m.type} ${m.key}`)).toEqual([
      'PersistentVolumeClaim annotation volhook.io/b',
      'PersistentVolume annotation forwarder.volhook.io/seen',
      'VolumeAttachment finalizer volhook.io/old',
      'VolumeSnapshotContent annotation volhook.io/a',
    ]);
  });

  it('isVolhookKey: volhook.io and its subdomains only', () => {
    expect(['volhook.io/x', 'a.volhook.io/x', 'a.b.volhook.io/x'].every(isVolhookKey)).toBe(true);
    expect(['notvolhook.io/x', 'volhook.io.evil.com/x', 'volhook.iox/y', 'kubernetes.io/pvc-protection', 'volhook.io'].some(isVolhookKey)).toBe(false);
  });
});

describe('checkForSidecars: EBS objects -> what external-provisioner / external-attacher would find wrong', () => {
  it('as external-provisioner and external-attacher write them -> no finding', () => {
    expect(checkForSidecars(view())).toEqual([]);
  });

  it('a Delete-policy provisioned PV without the provisioner finalizer -> fixed by adding it; being deleted -> reported only', () => {
    const [finding] = checkForSidecars(view({ volumes: [csiPv({ finalizers: ['kubernetes.io/pv-protection', ATTACHER] })] }));
    expect(finding).toMatchObject({ target: { kind: 'PersistentVolume', name: PV }, fix: { op: 'addFinalizer', finalizer: PROVISIONER, target: { uid: 'pv-uid-1' } } });
    const [deleting] = checkForSidecars(view({ volumes: [csiPv({ finalizers: [ATTACHER], deletionTimestamp: DELETED })] }));
    expect(deleting?.fix).toBeUndefined();
    expect(deleting?.action).toMatch(/report only: it is being deleted/);
  });

  it('Retain, or a static PV (no provisioned-by) without the provisioner finalizer -> no finding', () => {
    expect(checkForSidecars(view({ volumes: [csiPv({ policy: 'Retain', finalizers: [ATTACHER] })] }))).toEqual([]);
    const staticPv = { ...csiPv({ annotations: {}, finalizers: [ATTACHER] }), metadata: { name: 'static-1', uid: 'pv-s', finalizers: [ATTACHER], annotations: {} } };
    expect(checkForSidecars(view({ volumes: [staticPv], attachments: [va({ pv: 'static-1' })], claims: [] }))).toEqual([]);
  });

  it.each<[string, Pv, RegExp]>([
    ['provisioned-by another provisioner', csiPv({ annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/other' }, finalizers: [ATTACHER] }), /provisioned-by is "example.com\/other".*leaves its reclaim/],
    ['named pvc-<claim uid> but no provisioned-by', csiPv({ annotations: {}, finalizers: [ATTACHER] }), /without pv.kubernetes.io\/provisioned-by: external-provisioner takes it for a static PV/],
    ['a volume handle that is no EBS ID', csiPv({ handle: 'arn:aws:ec2:x', finalizers: [PROVISIONER, ATTACHER] }), /is not an EBS volume ID/],
    ['no fsType on a Filesystem PV', csiPv({ fsType: null, finalizers: [PROVISIONER, ATTACHER] }), /no csi.fsType: the node plugin formats it with its default, ext4/],
    ['no zone in its node affinity', csiPv({ zone: false, finalizers: [PROVISIONER, ATTACHER] }), /no zone in spec.nodeAffinity/],
  ])('%s -> reported, not fixed (a field release may not or cannot write)', (_what, pv, problem) => {
    const findings = checkForSidecars(view({ volumes: [pv] }));
    const hit = findings.find((f) => problem.test(f.problem));
    expect(hit, JSON.stringify(findings)).toBeDefined();
    expect(hit?.fix).toBeUndefined();
    expect(hit?.action).toMatch(/^report only/);
  });

  it('a Block PV without fsType -> no finding (external-provisioner writes none for Block)', () => {
    expect(checkForSidecars(view({ volumes: [csiPv({ fsType: null, volumeMode: 'Block', finalizers: [PROVISIONER, ATTACHER] })] }))).toEqual([]);
  });

  it('an attached VolumeAttachment without the attacher finalizer -> fixed (adding it); being deleted -> reported', () => {
    const [finding] = checkForSidecars(view({ attachments: [va({ finalizers: [] })] }));
    expect(finding).toMatchObject({ target: { kind: 'VolumeAttachment', name: 'csi-abc' }, fix: { op: 'addFinalizer', finalizer: ATTACHER } });
    expect(finding?.problem).toMatch(/deleting it leaves the disk attached to node-a/);
    const [deleting] = checkForSidecars(view({ attachments: [va({ finalizers: [], deletionTimestamp: DELETED })] }));
    expect(deleting?.fix).toBeUndefined();
  });

  it('an attached VolumeAttachment without node-id -> set from the CSINode; no CSINode entry -> reported', () => {
    const [finding] = checkForSidecars(view({ attachments: [va({ annotations: {} })] }));
    expect(finding?.fix).toEqual({ op: 'setAnnotation', target: { kind: 'VolumeAttachment', name: 'csi-abc', uid: 'va-uid-1' }, key: NODE_ID, value: 'i-0123456789abcdef0' });
    const [unknown] = checkForSidecars(view({ attachments: [va({ annotations: {} })], csiNodes: [] }));
    expect(unknown?.fix).toBeUndefined();
    expect(unknown?.action).toMatch(/CSINode node-a names no ID/);
  });

  it('a not-yet-attached VolumeAttachment without finalizer or node-id -> no finding (external-attacher does it all)', () => {
    expect(checkForSidecars(view({ attachments: [va({ attached: false, finalizers: [], annotations: {} })], volumes: [csiPv()] }))).toEqual([]);
  });

  it('a PV an attached VolumeAttachment uses, without the attacher finalizer -> fixed on the PV', () => {
    const findings = checkForSidecars(view({ volumes: [csiPv()] }));
    expect(findings).toEqual([expect.objectContaining({ target: { kind: 'PersistentVolume', name: PV, uid: 'pv-uid-1' }, fix: { op: 'addFinalizer', target: { kind: 'PersistentVolume', name: PV, uid: 'pv-uid-1' }, finalizer: ATTACHER } })]);
  });

  it("a claim bound to a provisioned PV without the driver's storage-provisioner -> reported; migrated-to the driver -> fine", () => {
    const [finding] = checkForSidecars(view({ claims: [claim({ volumeName: PV, annotations: {} })] }));
    expect(finding).toMatchObject({ target: { kind: 'PersistentVolumeClaim', namespace: 'shop', name: 'data' }, action: 'report only: the PV controller writes it' });
    const migrated = claim({ volumeName: PV, annotations: { 'volume.kubernetes.io/storage-provisioner': 'kubernetes.io/aws-ebs', 'pv.kubernetes.io/migrated-to': 'ebs.csi.aws.com' } });
    expect(checkForSidecars(view({ claims: [migrated] }))).toEqual([]);
  });

  it('an in-tree PV: without migrated-to -> reported; a bare or aws:// vol- ID and zone labels -> fine', () => {
    const inTree = (annotations: Record<string, string>): Pv => ({
      metadata: { name: 'pv-gp2', uid: 'pv-it', finalizers: [PROVISIONER], annotations, labels: { 'topology.kubernetes.io/zone': 'us-east-1a' } },
      spec: { awsElasticBlockStore: { volumeID: `aws://us-east-1a/${VOL}`, fsType: 'ext4' }, persistentVolumeReclaimPolicy: 'Delete' },
      status: { phase: 'Available' },
    });
    const ok = inTree({ 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs', 'pv.kubernetes.io/migrated-to': 'ebs.csi.aws.com' });
    expect(checkForSidecars({ claims: [], volumes: [ok], attachments: [], csiNodes: [] })).toEqual([]);
    const [finding] = checkForSidecars({ claims: [], volumes: [inTree({ 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs' })], attachments: [], csiNodes: [] });
    expect(finding?.problem).toMatch(/without pv.kubernetes.io\/migrated-to: ebs.csi.aws.com/);
  });

  it('PVs of other drivers -> never looked at', () => {
    const nfs: Pv = { metadata: { name: 'nfs', uid: 'n', annotations: { 'volhook.io/x': '1' } }, spec: { persistentVolumeReclaimPolicy: 'Delete' }, status: { phase: 'Bound' } };
    expect(checkForSidecars({ claims: [], volumes: [nfs], attachments: [], csiNodes: [] })).toEqual([]);
  });
});

const SERVER_NOW = 'Tue, 01 Sep 2026 12:00:30 GMT';
const at = (secondsBefore: number) => new Date(Date.parse(SERVER_NOW) - secondsBefore * 1000).toISOString();
const quiet: ForwarderEvidence = { serverDate: SERVER_NOW, deployment: { kind: 'not-served' }, pods: [] };
const lease = (holder: string, duration: number, times: string[]) => ({ ...quiet, lease: { holderIdentity: holder, leaseDurationSeconds: duration, times } });

describe('judgeForwarder: live evidence, by the API server clock -> whether a forwarder may run', () => {
  it.each<[string, ForwarderEvidence, 'forwarder' | 'direct', boolean]>([
    ['held, renewed 3 s ago, lease 15 s', lease('fwd-1', 15, [at(3)]), 'forwarder', true],
    ['held, renewed 14 s ago, lease 15 s', lease('fwd-1', 15, [at(14)]), 'forwarder', true],
    // A holder that stopped renewing without releasing: cut off, maybe with requests in flight.
    ['held, renewed 16 s ago, lease 15 s (within the in-flight grace)', lease('fwd-1', 15, [at(16)]), 'forwarder', true],
    ['held, renewed 15 + 30 + 1 s ago', lease('fwd-1', 15, [at(15 + IN_FLIGHT_SECONDS + 1)]), 'forwarder', false],
    ['released on shutdown 0 s ago (lease 1 s)', lease('', 1, [at(0)]), 'forwarder', true],
    ['released on shutdown 2 s ago (lease 1 s)', lease('', 1, [at(2)]), 'forwarder', false],
    ['released 2 s ago, but writeBack direct: the backend may still apply writes', lease('', 1, [at(2)]), 'direct', true],
    ['released 32 s ago, writeBack direct', lease('', 1, [at(32)]), 'direct', false],
    // renewTime by a holder whose clock runs 60 s behind; the API server dated its write now.
    ['held, renewTime 60 s old but managedFields (the API server) 2 s old', lease('fwd-1', 15, [at(60), at(2)]), 'forwarder', true],
    ['held, with no time recorded', lease('fwd-1', 15, []), 'forwarder', true],
    ['held, no Date from the API server', { ...lease('fwd-1', 15, [at(60)]), serverDate: undefined } as ForwarderEvidence, 'forwarder', true],
    ['no Lease, nothing else', quiet, 'forwarder', false],
  ])('%s -> refused %s', (_what, evidence, writeBack, refused) => {
    const verdict = judgeForwarder(evidence, 'c1', writeBack);
    expect(verdict.refusals.length > 0).toBe(refused);
  });

  it('a Deployment with replicas, or a running pod -> refused, naming it, whatever the Lease says', () => {
    const expired = lease('', 1, [at(600)]);
    const deployed = judgeForwarder({ ...expired, deployment: { kind: 'present', replicas: 2, readyReplicas: 0, helm: { name: 'volhook-forwarder', namespace: 'volhook-system' } } }, 'c1');
    expect(deployed.refusals).toEqual(['Deployment volhook-system/volhook-forwarder wants 2 replica(s): uninstall the forwarder first']);
    expect(deployed.uninstall[0]).toBe('helm uninstall volhook-forwarder -n volhook-system');
    const scaledDown = judgeForwarder({ ...expired, deployment: { kind: 'present', replicas: 0, readyReplicas: 0 } }, 'c1');
    expect(scaledDown.refusals).toEqual([]);
    expect(scaledDown.uninstall[0]).toMatch(/^kubectl -n volhook-system delete deployment,.* -l app.kubernetes.io\/name=volhook-forwarder$/);
    const pod = judgeForwarder({ ...expired, pods: [{ name: 'volhook-forwarder-abc', phase: 'Running' }] }, 'c1');
    expect(pod.refusals).toEqual(['pod volhook-system/volhook-forwarder-abc of the forwarder is Running: uninstall the forwarder first']);
  });

  it("the forwarder's ConfigMap names another cluster -> refused (wrong kubeconfig context); the same cluster -> not", () => {
    expect(judgeForwarder({ ...quiet, configMap: { clusterId: 'other' } }, 'c1').refusals[0]).toMatch(/configures the forwarder for cluster "other", not "c1": is this the right kubeconfig context\?/);
    expect(judgeForwarder({ ...quiet, configMap: { clusterId: 'c1' } }, 'c1').refusals).toEqual([]);
  });

  it('the refusal says until when, by the API server clock', () => {
    const [refusal] = judgeForwarder(lease('fwd-1', 15, [at(3)]), 'c1').refusals;
    expect(refusal).toBe(
      `Lease volhook-system/volhook-forwarder is held by fwd-1, last written 3 s before the API server's time (lease 15 s + ${IN_FLIGHT_SECONDS} s for requests in flight): a forwarder may be running; try again after ${new Date(Date.parse(SERVER_NOW) - 3000 + 45_000).toISOString()} by the API server's clock`,
    );
  });
});

describe('planRelease: the plan --apply carries out', () => {
  it('marks, held claims and forwarder refusals together; the writes are the removals then the fixes, in that order', () => {
    const plan = planRelease({
      clusterId: 'c1',
      view: view({
        claims: [claim({ volumeName: PV, finalizers: [PROTECTION] }), claim({ uid: 'u-2', finalizers: [PROTECTION] })],
        attachments: [va({ annotations: {} })],
      }),
      evidence: lease('fwd-1', 15, [at(1)]),
    });
    expect(plan.writes).toEqual([
      { op: 'removeFinalizer', target: { kind: 'PersistentVolumeClaim', namespace: 'shop', name: 'data', uid: UID }, finalizer: PROTECTION },
      { op: 'setAnnotation', target: { kind: 'VolumeAttachment', name: 'csi-abc', uid: 'va-uid-1' }, key: NODE_ID, value: 'i-0123456789abcdef0' },
    ]);
    expect(plan.refusals).toHaveLength(2);
    expect(plan.refusals[1]).toMatch(/^claim shop\/data: volhook is provisioning it: .*run the forwarder until volhook settles it/);
  });

  it('nothing of volhook left and no forwarder -> no writes, no refusals', () => {
    expect(planRelease({ clusterId: 'c1', view: view(), evidence: quiet })).toMatchObject({ writes: [], refusals: [] });
  });
});
