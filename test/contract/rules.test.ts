/**
 * The rules the forwarder and the backend share, each defined once in lib/contract. For each
 * rule the same fixtures go three ways: into the rule itself, over both shapes it sees
 * (client-node objects as the informers cache them — optional fields, `Date`s — and the
 * contract's zod-parsed items); through the forwarder's use of it (filter, item builders);
 * and through the backend's use of it (the reconcilers, the StorageClass rules, the CLI).
 */
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  claimClassName,
  isOurVolume,
  isReservedTagKey,
  ItemKeys,
  ItemSchema,
  itemKey,
  nodeZone,
  NodeInfoSchema,
  PersistentVolumeClaimSchema,
  PersistentVolumeSchema,
  reclaimPolicy,
  type ItemInput,
  type PersistentVolumeClaimItem,
} from '../../lib/contract/index.js';
import { parseClusterArgs, UsageError } from '../../lib/cli/index.js';
import type { RegistrationSettings } from '../../lib/cli/args.js';
import { isSettledVolume, isOurVolume as forwarderIsOurVolume } from '../../lib/forwarder/filter.js';
import {
  buildAttachmentItem,
  buildClaimDeletedItem,
  buildClaimItem,
  buildVolumeItem,
  clusterZones,
  keys,
  nodeInfo,
  plain,
} from '../../lib/forwarder/items.js';
import { prepareProvision } from '../../lib/reconcile/provision-job.js';
import { volumeTags } from '../../lib/reconcile/tags.js';
import { chooseZone } from '../../lib/reconcile/zone.js';
import { ClusterRegistrationSchema, type ClusterRegistrationInput } from '../../lib/registry/registration.js';
import { MAX_VOLUME_SIZE_GIB, ParameterError, VOLUME_TYPES, volumeSpecFor } from '../../lib/storageclass/index.js';
import { attachment, claim, csiNode, node, storageClass, viewOf, volume } from '../forwarder/objects.js';
import { CLAIM_UID, CLUSTER, DRIVER, ownedTags, PV_NAME, reconcileOne, setup } from '../reconcile/fixtures.js';

const ownership = { provisioner: DRIVER, driver: DRIVER };
const BETA_CLASS = 'volume.beta.kubernetes.io/storage-class';
const PROVISIONER_FINALIZER = 'external-provisioner.volume.kubernetes.io/finalizer';
const ATTACHER_FINALIZER = 'external-attacher/ebs-csi-aws-com';

/** What the backend receives for an item the forwarder built: its JSON, parsed by the contract. */
const received = (item: ItemInput) => ItemSchema.parse(JSON.parse(JSON.stringify(item)));

/** A claim of ours as an informer caches it, with the class set as `options` say. */
function cachedClaim(options: { beta?: string; storageClassName?: string; selectedNode?: string } = {}): V1PersistentVolumeClaim {
  const pvc = claim('data', { uid: CLAIM_UID, namespace: 'shop', ...(options.selectedNode ? { selectedNode: options.selectedNode } : {}) });
  pvc.metadata!.creationTimestamp = new Date('2025-03-01T11:00:00Z');
  if (options.beta !== undefined) pvc.metadata!.annotations![BETA_CLASS] = options.beta;
  if (options.storageClassName === undefined) delete pvc.spec!.storageClassName;
  else pvc.spec!.storageClassName = options.storageClassName;
  return pvc;
}

describe('claimClassName: the beta annotation wins over spec.storageClassName', () => {
  const cases = [
    { name: 'spec.storageClassName only -> it', options: { storageClassName: 'fast' }, expected: 'fast' },
    { name: 'beta annotation and spec.storageClassName -> the annotation', options: { beta: 'slow', storageClassName: 'fast' }, expected: 'slow' },
    { name: 'beta annotation only -> it', options: { beta: 'slow' }, expected: 'slow' },
    { name: 'neither -> none', options: {}, expected: undefined },
  ];
  const classes = [storageClass('fast', 'Immediate'), storageClass('slow', 'Immediate')];
  const view = viewOf({ classes, nodes: [node('n1', 'us-east-1a')] });

  it.each(cases)('rule over client-node and zod shapes: $name', ({ options, expected }) => {
    const pvc = cachedClaim(options);
    expect(claimClassName(pvc)).toBe(expected);
    expect(claimClassName(PersistentVolumeClaimSchema.parse(plain(pvc)))).toBe(expected);
  });

  it.each(cases)('forwarder (the class it sends) and backend (the class it provisions with): $name', ({ options, expected }) => {
    const item = buildClaimItem(cachedClaim(options), view, DRIVER);
    expect(item.storageClass?.metadata.name ?? undefined).toBe(expected);

    const prepared = prepareProvision(received(item) as PersistentVolumeClaimItem, setup().ctx);
    if (expected === undefined) expect(prepared).toMatchObject({ verdict: { outcome: 'requeue' } });
    else expect(prepared).toMatchObject({ job: { className: expected, storageClass: { metadata: { name: expected } } } });
  });
});

describe('isOurVolume: provisioned by us, or naming our driver', () => {
  const pv = (options: { provisionedBy?: string; driver?: string }): V1PersistentVolume => {
    const object = volume(PV_NAME, options);
    object.metadata!.uid = 'a1b2c3d4-0000-4000-8000-000000000001';
    // The attacher finalizer with no attachment left: the backend drops it from a PV of ours.
    object.metadata!.finalizers = [PROVISIONER_FINALIZER, ATTACHER_FINALIZER];
    return object;
  };
  const cases = [
    { name: 'provisioned by us, another driver -> ours', options: { provisionedBy: DRIVER, driver: 'efs.csi.aws.com' }, ours: true },
    { name: 'our driver, no provisioned-by (static) -> ours', options: {}, ours: true },
    { name: 'another provisioner and driver -> not ours', options: { provisionedBy: 'example.com/nfs', driver: 'nfs.csi.k8s.io' }, ours: false },
  ];

  it.each(cases)('rule over client-node and zod shapes: $name', ({ options, ours }) => {
    expect(isOurVolume(pv(options), ownership)).toBe(ours);
    expect(isOurVolume(PersistentVolumeSchema.parse(plain(pv(options))), ownership)).toBe(ours);
  });

  it.each(cases)('forwarder (watches and sends it) and backend (keeps its finalizers): $name', async ({ options, ours }) => {
    expect(forwarderIsOurVolume(pv(options), ownership)).toBe(ours);
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, buildVolumeItem(pv(options), viewOf({})));
    expect(result.writes.some((w) => w.op === 'removeFinalizer')).toBe(ours);
    expect(ec2.calls).toEqual([]);
  });
});

describe("a node's zone: the well-known label, else the EBS driver's, else the providerID", () => {
  const cases: { name: string; labels: Record<string, string>; providerID?: string; expected: string | undefined }[] = [
    { name: 'well-known label -> it', labels: { 'topology.kubernetes.io/zone': 'us-east-1a', 'topology.ebs.csi.aws.com/zone': 'us-east-1b' }, providerID: 'aws:///us-east-1c/i-0123456789abcdef0', expected: 'us-east-1a' },
    { name: "EBS driver's label only -> it", labels: { 'topology.ebs.csi.aws.com/zone': 'us-east-1b' }, expected: 'us-east-1b' },
    { name: "empty well-known label -> the EBS driver's", labels: { 'topology.kubernetes.io/zone': '', 'topology.ebs.csi.aws.com/zone': 'us-east-1b' }, expected: 'us-east-1b' },
    { name: 'no zone label, aws:/// providerID -> its zone', labels: {}, providerID: 'aws:///us-east-1c/i-0123456789abcdef0', expected: 'us-east-1c' },
    { name: 'no zone label, another providerID -> none', labels: {}, providerID: 'kind://docker/kind/worker', expected: undefined },
  ];
  const cachedNode = (c: (typeof cases)[number]): V1Node => ({
    metadata: { name: 'n1', labels: { ...c.labels }, creationTimestamp: new Date('2025-03-01T10:00:00Z') },
    spec: c.providerID ? { providerID: c.providerID } : {},
  });

  it.each(cases)('rule over client-node and zod shapes: $name', (c) => {
    const object = cachedNode(c);
    expect(nodeZone({ labels: object.metadata?.labels, providerID: object.spec?.providerID })).toBe(c.expected);
    expect(nodeZone(NodeInfoSchema.parse(nodeInfo(object, csiNode('n1'), DRIVER)))).toBe(c.expected);
  });

  it.each(cases)("forwarder (the cluster's zones it sends) and backend (the zone of the selected node): $name", (c) => {
    expect(clusterZones([cachedNode(c)])).toEqual(c.expected ? [c.expected] : []);

    const view = viewOf({ classes: [storageClass('gp3', 'WaitForFirstConsumer')], nodes: [cachedNode(c)], csiNodes: [csiNode('n1')] });
    const item = received(buildClaimItem(cachedClaim({ storageClassName: 'gp3', selectedNode: 'n1' }), view, DRIVER)) as PersistentVolumeClaimItem;
    const choice = chooseZone(item, item.storageClass!, []);
    expect(choice).toEqual(c.expected ? { kind: 'zone', zone: c.expected } : expect.objectContaining({ kind: 'none' }));
  });

  it('an Immediate claim -> the backend picks from the zones the forwarder derived, providerID-only nodes included', () => {
    const providerOnly: V1Node = { metadata: { name: 'n2', labels: {} }, spec: { providerID: 'aws:///us-east-1c/i-0123456789abcdef1' } };
    const view = viewOf({ classes: [storageClass('gp3', 'Immediate')], nodes: [providerOnly] });
    const item = received(buildClaimItem(cachedClaim({ storageClassName: 'gp3' }), view, DRIVER)) as PersistentVolumeClaimItem;
    expect(item.clusterZones).toEqual(['us-east-1c']);
    expect(chooseZone(item, item.storageClass!, [])).toEqual({ kind: 'zone', zone: 'us-east-1c' });
  });
});

describe('the reclaim policy: unset means Retain, as the API defaults it', () => {
  const pv = (policy: string | undefined, phase: string, finalizers: string[]): V1PersistentVolume => {
    const object = volume(PV_NAME, { provisionedBy: DRIVER, phase });
    object.metadata!.uid = 'a1b2c3d4-0000-4000-8000-000000000002';
    object.metadata!.finalizers = finalizers;
    if (policy === undefined) delete object.spec!.persistentVolumeReclaimPolicy;
    else object.spec!.persistentVolumeReclaimPolicy = policy;
    return object;
  };
  const cases = [
    { name: 'unset -> Retain', policy: undefined, expected: 'Retain', deletes: false },
    { name: 'Retain -> Retain', policy: 'Retain', expected: 'Retain', deletes: false },
    { name: 'Delete -> Delete', policy: 'Delete', expected: 'Delete', deletes: true },
  ];

  it.each(cases)('rule over client-node and zod shapes: $name', ({ policy, expected }) => {
    expect(reclaimPolicy(pv(policy, 'Bound', []))).toBe(expected);
    expect(reclaimPolicy(PersistentVolumeSchema.parse(plain(pv(policy, 'Bound', []))))).toBe(expected);
  });

  it.each(cases)('backend: a Released PV of ours, its disk free -> deleted only for Delete: $name', async ({ policy, deletes }) => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: 'vol-0123456789abcdef0', tags: ownedTags() });
    const result = await reconcileOne(ctx, buildVolumeItem(pv(policy, 'Released', [PROVISIONER_FINALIZER]), viewOf({})));
    expect(ec2.calls.some((c) => c.verb === 'deleteDisk')).toBe(deletes);
    expect(ec2.volumes.get('vol-0123456789abcdef0')?.state).toBe(deletes ? 'deleting' : 'available');
    if (!deletes) expect(result).toMatchObject({ outcome: 'done', writes: [{ op: 'removeFinalizer', finalizer: PROVISIONER_FINALIZER }] });
  });

  it.each(cases)('forwarder settled <-> backend has nothing to write, for a Bound PV without the provisioner finalizer: $name', async ({ policy, deletes }) => {
    const bound = pv(policy, 'Bound', []);
    const { ctx } = setup();
    const result = await reconcileOne(ctx, buildVolumeItem(bound, viewOf({})));
    // Delete: the backend adds its finalizer, so the forwarder must keep offering the PV on resync.
    expect(result.writes.length > 0).toBe(deletes);
    expect(isSettledVolume(bound)).toBe(!deletes);
  });
});

describe('queue keys: ItemKeys beside itemKey', () => {
  const view = viewOf({
    classes: [storageClass('gp3', 'Immediate')],
    nodes: [node('n1', 'us-east-1a')],
    csiNodes: [csiNode('n1')],
    volumes: [volume(PV_NAME, { provisionedBy: DRIVER })],
    attachments: [attachment('csi-abc', PV_NAME, 'n1')],
  });
  const cases: { name: string; key: string; item: ItemInput }[] = [
    { name: 'claim', key: keys.claim('shop', 'data'), item: buildClaimItem(cachedClaim({ storageClassName: 'gp3' }), view, DRIVER) },
    { name: 'deleted claim', key: keys.claimDeleted(CLAIM_UID), item: buildClaimDeletedItem({ uid: CLAIM_UID, namespace: 'shop', name: 'data' }, view) },
    { name: 'volume', key: keys.volume(PV_NAME), item: buildVolumeItem(volume(PV_NAME, { provisionedBy: DRIVER }), view) },
    { name: 'attachment', key: keys.attachment('csi-abc'), item: buildAttachmentItem(attachment('csi-abc', PV_NAME, 'n1'), view, DRIVER) },
  ];

  it('the forwarder keys by the contract: keys is ItemKeys', () => {
    expect(keys).toBe(ItemKeys);
  });

  it.each(cases)('$name -> the key the forwarder queues = itemKey of the item it builds = the key the backend answers', async ({ key, item }) => {
    expect(itemKey(item)).toBe(key);
    const { ctx } = setup();
    expect((await reconcileOne(ctx, item)).key).toBe(key);
  });

  it('keys are distinct across kinds', () => {
    expect(new Set(cases.map((c) => c.key)).size).toBe(cases.length);
  });
});

describe('reserved tag keys: one rule for StorageClasses, the registration and the CLI', () => {
  const cases = [
    { key: 'CSIVolumeName', reserved: true },
    { key: 'csivolumesnapshotname', reserved: true },
    { key: 'Kubernetes.io/cluster/other', reserved: true },
    { key: 'kubernetes.io/created-for/pv/name', reserved: true },
    { key: 'EBS.CSI.AWS.COM/cluster', reserved: true },
    { key: 'aws:cloudformation:stack-name', reserved: true },
    { key: 'team', reserved: false },
    { key: 'ebs.csi.aws.com', reserved: false },
  ];
  const classWithTag = (key: string) => () =>
    volumeSpecFor({
      parameters: { type: 'gp3', tagSpecification_1: `${key}=x` },
      requestStorage: '1Gi',
      volumeMode: 'Filesystem',
      accessModes: ['ReadWriteOnce'],
      pvcName: 'data',
      pvcNamespace: 'shop',
      pvName: PV_NAME,
    });

  it.each(cases)('"$key" -> reserved $reserved: StorageClass refuses, registration tag dropped, CLI refuses', ({ key, reserved }) => {
    expect(isReservedTagKey(key)).toBe(reserved);
    if (reserved) expect(classWithTag(key)).toThrow(ParameterError);
    else expect(classWithTag(key)().tags).toEqual({ [key]: 'x' });

    const tags = volumeTags({ clusterId: CLUSTER, pvName: PV_NAME, pvcName: 'data', pvcNamespace: 'shop', classTags: {}, extraTags: { [key]: 'x' } });
    expect(tags[key] === 'x').toBe(!reserved);

    const add = () => parseClusterArgs(['add', CLUSTER, '--region', 'us-east-1', '--tag', `${key}=x`]);
    if (reserved) expect(add).toThrow(UsageError);
    else expect(add()).toMatchObject({ settings: { extraTags: { [key]: 'x' } } });
  });
});

describe('volume types and the size maximum: one list, one maximum', () => {
  const spec = (type: string, requestStorage: string) => () =>
    volumeSpecFor({ parameters: { type }, requestStorage, volumeMode: 'Filesystem', accessModes: ['ReadWriteOnce'], pvcName: 'data', pvcNamespace: 'shop', pvName: PV_NAME });
  const registration = (input: Partial<ClusterRegistrationInput>) =>
    ClusterRegistrationSchema.safeParse({ clusterId: CLUSTER, secrets: ['a-secret-of-at-least-24-bytes'], region: 'us-east-1', ...input }).success;
  const add = (...options: string[]) => () => parseClusterArgs(['add', CLUSTER, '--region', 'us-east-1', ...options]);

  it.each([...VOLUME_TYPES.map((type) => ({ type, known: true })), { type: 'gp9', known: false }])(
    '$type -> known $known to the StorageClass, the registration and the CLI',
    ({ type, known }) => {
      const request = type === 'st1' || type === 'sc1' ? '125Gi' : '4Gi';
      if (known) expect(spec(type, request)).not.toThrow();
      else expect(spec(type, request)).toThrow(ParameterError);
      expect(registration({ allowedVolumeTypes: [type as never] })).toBe(known);
      if (known) expect(add('--types', type)()).toMatchObject({ settings: { allowedVolumeTypes: [type] } });
      else expect(add('--types', type)).toThrow(UsageError);
    },
  );

  it(`${MAX_VOLUME_SIZE_GIB} GiB -> the largest a type allows and the CLI takes; one more -> refused by both`, () => {
    const accepts = (size: number) =>
      VOLUME_TYPES.filter((type) => {
        try {
          spec(type, `${size}Gi`)();
          return true;
        } catch (error) {
          if (error instanceof ParameterError) return false;
          throw error;
        }
      });
    expect(MAX_VOLUME_SIZE_GIB).toBe(65_536);
    expect(accepts(MAX_VOLUME_SIZE_GIB)).toContain('gp3');
    expect(accepts(MAX_VOLUME_SIZE_GIB + 1)).toEqual([]);
    expect(add('--max-size-gib', String(MAX_VOLUME_SIZE_GIB))()).toMatchObject({ settings: { maxSizeGiB: MAX_VOLUME_SIZE_GIB } });
    expect(add('--max-size-gib', String(MAX_VOLUME_SIZE_GIB + 1))).toThrow(UsageError);
  });
});

describe("the CLI's registration settings: derived from the registration schema", () => {
  it('each setting has the type the schema takes', () => {
    expectTypeOf<RegistrationSettings['region']>().toEqualTypeOf<ClusterRegistrationInput['region']>();
    expectTypeOf<RegistrationSettings['allowedVolumeTypes']>().toEqualTypeOf<ClusterRegistrationInput['allowedVolumeTypes']>();
    expectTypeOf<RegistrationSettings['maxSizeGiB']>().toEqualTypeOf<ClusterRegistrationInput['maxSizeGiB']>();
    expectTypeOf<RegistrationSettings['writeBack']>().toEqualTypeOf<ClusterRegistrationInput['writeBack']>();
    expectTypeOf<RegistrationSettings['extraTags']>().toEqualTypeOf<ClusterRegistrationInput['extraTags']>();
  });

  it('every option of add -> settings the schema accepts', () => {
    const command = parseClusterArgs(
      ['add', CLUSTER, '--region', 'us-east-1', '--zones', 'us-east-1a', '--types', 'gp3,io2', '--max-size-gib', '100', '--tag', 'team=storage', '--write-back', 'forwarder'],
    );
    if (command.command !== 'add') throw new Error('expected add');
    const { kubernetes: _kube, ...settings } = command.settings;
    expect(ClusterRegistrationSchema.safeParse({ clusterId: CLUSTER, secrets: ['a-secret-of-at-least-24-bytes'], ...settings }).success).toBe(true);
  });
});
