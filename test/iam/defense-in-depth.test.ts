/**
 * Defense in depth (issue 23, second acceptance point): with the code's ownership checks switched
 * off (a test-only seam: `tagOwnership` says every disk is the cluster's, `isClusterInstance`
 * every instance), cluster alpha's reconciler is handed items that name cluster beta's disks. The
 * real EC2 client, signed with alpha's STS session of the EC2 role, carries each attack to the
 * simulator, whose IAM evaluation refuses it with UnauthorizedOperation; nothing of beta's
 * changes. Each row has two controls through the same path: the same item over alpha's own disk
 * succeeds (so the call was possible), and with the checks on, the attack never reaches EC2.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { identityTags, SourceFinalizers, TagKeys, type ItemInput, type Result } from '../../lib/contract/index.js';
import { DEFAULT_NODE_TAG_KEY } from '../../lib/contract/tags.js';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { Ec2Simulator, ManualClock } from '../../lib/local/ec2/index.js';
import type { ReconcileContext } from '../../lib/reconcile/index.js';
import { ClusterRegistrationSchema } from '../../lib/registry/registration.js';
import { isMutation, simulatorClusterClients, type Ec2Call } from '../crash/ec2-transport.js';
import {
  ATTACHER_FINALIZER,
  attachedVolume,
  CLUSTER,
  claim,
  claimItem,
  DRIVER,
  node,
  NOW,
  persistentVolume,
  PV_NAME,
  pvItem,
  reconcileOne,
  storageClass,
  vaItem,
  volumeAttachment,
} from '../reconcile/fixtures.js';
import { contentItem } from '../reconcile/snapshot-fixtures.js';
import { BACKEND, EC2_ROLE, EC2_ROLE_ARN, REGION, ZONE } from './fixtures.js';

/** The seam: while `checks.on` is false, every ownership decision of the code says "ours". */
const checks = vi.hoisted(() => ({ on: true }));
vi.mock('../../lib/contract/tags.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../lib/contract/tags.js')>();
  return { ...original, tagOwnership: (tags: Readonly<Record<string, string>>, clusterId: string) => (checks.on ? original.tagOwnership(tags, clusterId) : { kind: 'owned' as const }) };
});
vi.mock('../../lib/reconcile/tags.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../lib/reconcile/tags.js')>();
  return { ...original, isClusterInstance: (...args: Parameters<typeof original.isClusterInstance>) => !checks.on || original.isClusterInstance(...args) };
});

const OTHER = 'beta';
const CLONE_UID = '99999999-8888-4777-8666-555555555555';
const BACKEND_KEY = 'lambda-role';
/** The operator's key: not held to any policy (test setup). */
const ADMIN = { accessKeyId: 'operator' };

interface Cluster {
  /** A disk of the cluster, available. */
  disk: string;
  /** A disk of the cluster attached to its node. */
  attached: string;
  node: string;
}

let sim: Ec2Simulator;
let calls: Ec2Call[];
let clusters: Record<typeof CLUSTER | typeof OTHER, Cluster>;
let ctx: ReconcileContext;

async function admin(params: Record<string, string>) {
  const response = await sim.call(params, ADMIN);
  if (response.status !== 200) throw new Error(`${params.Action}: ${response.body}`);
}

async function seedCluster(clusterId: string): Promise<Cluster> {
  const tags = { ...identityTags(clusterId, PV_NAME), [TagKeys.pvcName]: 'data', [TagKeys.pvcNamespace]: 'shop', [TagKeys.pvName]: PV_NAME };
  const [disk, attached] = sim.seedVolumes({ zone: ZONE, sizeGiB: 20, tags, count: 2 }).map((v) => v.id) as [string, string];
  const nodeId = sim.runInstance({ zone: ZONE, instanceTags: [{ key: TagKeys.cluster(clusterId), value: 'owned' }, { key: DEFAULT_NODE_TAG_KEY, value: clusterId }] }).id;
  await admin({ Action: 'AttachVolume', VolumeId: attached, InstanceId: nodeId, Device: '/dev/xvdba' });
  clock.advance(60_000);
  return { disk, attached, node: nodeId };
}

const clock = new ManualClock(NOW.getTime());

beforeEach(async () => {
  checks.on = true;
  calls = [];
  sim = new Ec2Simulator({ seed: 23, region: REGION, zones: [ZONE], throttling: false, createFaults: [], iam: { principals: { [BACKEND_KEY]: BACKEND }, roles: { [EC2_ROLE_ARN]: EC2_ROLE } } }, clock);
  clusters = { [CLUSTER]: await seedCluster(CLUSTER), [OTHER]: await seedCluster(OTHER) } as typeof clusters;

  const observe = (call: Ec2Call) => {
    calls.push(call);
    return false;
  };
  const clients = simulatorClusterClients(sim, observe, { backendKey: BACKEND_KEY, defaultRoleArn: EC2_ROLE_ARN, region: REGION, now: () => clock.now() });
  const registration = ClusterRegistrationSchema.parse({ clusterId: CLUSTER, secrets: ['a-secret-of-at-least-24-bytes'], region: REGION, aws: { nodeTag: { key: DEFAULT_NODE_TAG_KEY, value: CLUSTER } } });
  ctx = {
    clusterId: CLUSTER,
    registration,
    ec2: createEc2Gateway({ client: clients.for(registration).client, clusterId: CLUSTER, deadline: Date.now() + 60_000, batchWindowMs: 0 }),
    driverName: DRIVER,
    provisionerName: DRIVER,
    now: () => new Date(clock.now()),
    signedAt: new Date(clock.now()),
  };
});

const nodeOf = (instanceId: string) => node({ providerID: `aws:///${ZONE}/${instanceId}`, csiNode: { nodeID: instanceId } });
const boundClaim = (volumeId: string, spec: object, extra: object = {}) =>
  ({
    ...claimItem({
      pvc: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] }, spec: { volumeName: PV_NAME, ...spec }, status: { phase: 'Bound', capacity: { storage: '20Gi' } } },
      storageClass: storageClass({ allowVolumeExpansion: true }),
      pvExists: true,
      pv: persistentVolume({ spec: { csi: { volumeHandle: volumeId } } }),
    }),
    ...extra,
  }) as ItemInput;

interface Attack {
  /** The EC2 mutation the item leads to. */
  action: string;
  /** The item, over cluster `target`'s disks; alpha always attaches to its own node. */
  item(target: Cluster, own: Cluster): ItemInput;
}

const attacks: Record<string, Attack> = {
  'delete (a Released PV naming the disk)': {
    action: 'DeleteVolume',
    item: (target) => pvItem({ pv: { status: { phase: 'Released' }, spec: { csi: { volumeHandle: target.disk } } } }),
  },
  'detach (a VolumeAttachment being deleted)': {
    action: 'DetachVolume',
    item: (target) =>
      vaItem({
        volumeAttachment: volumeAttachment({ metadata: { deletionTimestamp: NOW.toISOString(), annotations: { 'csi.alpha.kubernetes.io/node-id': target.node } }, status: { attached: true } }),
        pv: attachedVolume({ spec: { csi: { volumeHandle: target.attached } } }),
        node: nodeOf(target.node),
      }),
  },
  'attach (the disk to alpha’s own node)': {
    action: 'AttachVolume',
    item: (target, own) =>
      vaItem({
        volumeAttachment: volumeAttachment({ metadata: { finalizers: [ATTACHER_FINALIZER], annotations: { 'csi.alpha.kubernetes.io/node-id': own.node } } }),
        pv: attachedVolume({ spec: { csi: { volumeHandle: target.disk } } }),
        node: nodeOf(own.node),
      }),
  },
  'clone (a claim whose source PV names the disk)': {
    action: 'CopyVolumes',
    item: (target) =>
      claimItem({
        // A claim of its own (not the one the seeded disks were made for), cloning the disk.
        pvc: { metadata: { uid: CLONE_UID }, spec: { dataSource: { kind: 'PersistentVolumeClaim', name: 'data-src', apiGroup: null } } },
        source: {
          kind: 'PersistentVolumeClaim',
          // Already protected as a clone's source (the write that comes before CopyVolumes).
          claim: claim({ metadata: { name: 'data-src', uid: '11111111-2222-4333-8444-555555555555', finalizers: [SourceFinalizers.claim] }, spec: { volumeName: 'pvc-src' }, status: { phase: 'Bound' } }),
          pv: persistentVolume({
            metadata: { name: 'pvc-src' },
            spec: { csi: { volumeHandle: target.disk }, nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [ZONE] }] }] } } },
          }),
        },
      }),
  },
  'retag (a VolumeAttributesClass with tags)': {
    action: 'CreateTags',
    item: (target) =>
      boundClaim(target.disk, { volumeAttributesClassName: 'tagged' }, { volumeAttributesClass: { metadata: { name: 'tagged' }, driverName: DRIVER, parameters: { tagSpecification_1: 'team=payments' } } }),
  },
  'resize (a bound claim asking for more)': {
    action: 'ModifyVolume',
    item: (target) => boundClaim(target.disk, { resources: { requests: { storage: '30Gi' } } }),
  },
  'snapshot (a VolumeSnapshotContent of the disk)': {
    action: 'CreateSnapshot',
    item: (target) => contentItem({ content: { spec: { source: { volumeHandle: target.disk } } } }),
  },
};

const reconcile = (item: ItemInput): Promise<Result> => reconcileOne(ctx, item);

const mutations = () => calls.filter((c) => isMutation(c.action)).map((c) => ({ action: c.action, code: c.response.code ?? 'ok' }));
/** Everything the simulator holds of a cluster: its disks and its node, as described. */
const stateOf = (c: Cluster) => JSON.stringify([sim.volume(c.disk), sim.volume(c.attached), sim.instance(c.node)]);

describe("cluster alpha's session, the code's ownership checks off, attacking beta's disks", () => {
  for (const [name, attack] of Object.entries(attacks)) {
    it(`${name} -> ${attack.action} reaches EC2 and is refused UnauthorizedOperation, beta unchanged; controls: alpha's own disk -> ${attack.action} allowed; checks on -> no call`, async () => {
      const own = clusters[CLUSTER];
      const target = clusters[OTHER];
      const before = stateOf(target);
      const snapshotsBefore = sim.snapshots().length;
      const volumesBefore = sim.volumes().length;

      // The checks on: the code refuses before any mutation.
      await reconcile(attack.item(target, own));
      expect(mutations()).toEqual([]);

      checks.on = false;
      await reconcile(attack.item(target, own));
      expect(mutations()).toEqual([{ action: attack.action, code: 'UnauthorizedOperation' }]);
      expect(stateOf(target)).toBe(before);
      expect(sim.snapshots()).toHaveLength(snapshotsBefore);
      expect(sim.volumes()).toHaveLength(volumesBefore);

      // The control: the same item over alpha's own disk, through the same path, goes through.
      calls = [];
      await reconcile(attack.item(own, own));
      expect(mutations()).toEqual([{ action: attack.action, code: 'ok' }]);
    });
  }
});
