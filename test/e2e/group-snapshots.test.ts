/**
 * Group snapshots end to end over the local stack (Kubernetes API with the group snapshot CRDs,
 * the local snapshot controller's group part, forwarder, backend, EC2 simulator) — and, in
 * `npm run test:e2e:real`, over the real plane with external-snapshotter's snapshot-controller
 * doing the common controller's group part — driven with
 * kubectl and YAML: three claims in use on one node -> one CreateSnapshots, three members ready,
 * each restorable, all deleted with the group; claims on two nodes -> refused with a message, no EC2 call.
 */
import { DescribeSnapshotsCommand, type Snapshot } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tagsOf, volumeById } from './support/ec2.js';
import { eventsFor, readVolume } from './support/kube.js';
import { kubectlFor, type Kubectl } from './support/kubectl.js';
import { STACK_START_MS } from './support/plane.js';
import { waitClaimBound, waitPodRunning, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;
let kubectl: Kubectl;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true, ec2: { timeScale: 400 } }));
  kubectl = await kubectlFor(stack);
  await kubectl.create(`apiVersion: groupsnapshot.storage.k8s.io/v1
kind: VolumeGroupSnapshotClass
metadata: { name: group-delete }
driver: ebs.csi.aws.com
deletionPolicy: Delete
`);
}, STACK_START_MS);
afterAll(async () => {
  await stack?.stop();
  await kubectl?.close();
});

const getJson = async <T>(...args: string[]): Promise<T> => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;
const calls = (action: string) => stack.simulator!.getStats().actions[action]?.calls ?? 0;

/** WaitForFirstConsumer claims labelled app=`app`, used by one pod pinned to `node`. */
async function claimsInUse(ns: string, app: string, node: string, claims: string[]): Promise<void> {
  for (const name of claims) {
    await kubectl.create(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: ${name}, namespace: ${ns}, labels: { app: ${app} } }
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: gp3
  resources: { requests: { storage: 4Gi } }
`);
  }
  await kubectl.create(`apiVersion: v1
kind: Pod
metadata: { name: ${app}-${claims[0]}, namespace: ${ns} }
spec:
  terminationGracePeriodSeconds: 1
  nodeSelector: { kubernetes.io/hostname: ${node} }
  containers:
    - name: app
      image: nginx:1.27
      volumeMounts:
${claims.map((c) => `        - { name: ${c}, mountPath: /data/${c} }`).join('\n')}
  volumes:
${claims.map((c) => `    - { name: ${c}, persistentVolumeClaim: { claimName: ${c} } }`).join('\n')}
`);
  await waitPodRunning(ctx, ns, `${app}-${claims[0]}`, 120_000);
}

const groupYaml = (ns: string, name: string, app: string) => `apiVersion: groupsnapshot.storage.k8s.io/v1
kind: VolumeGroupSnapshot
metadata: { name: ${name}, namespace: ${ns} }
spec:
  volumeGroupSnapshotClassName: group-delete
  source: { selector: { matchLabels: { app: ${app} } } }
`;

interface GroupJson {
  metadata: { uid: string };
  status?: { readyToUse?: boolean; boundVolumeGroupSnapshotContentName?: string; error?: { message?: string } };
}
interface GroupContentJson {
  status?: { readyToUse?: boolean; volumeGroupSnapshotHandle?: string; error?: { message?: string }; volumeSnapshotInfoList?: { volumeHandle: string; snapshotHandle: string }[] };
}
interface SnapshotList {
  items: { metadata: { name: string; ownerReferences?: { name: string }[] }; spec: { source: { persistentVolumeClaimName?: string } }; status?: { readyToUse?: boolean; boundVolumeSnapshotContentName?: string } }[];
}

async function clusterSnapshots(): Promise<Snapshot[]> {
  const { Snapshots } = await stack.ec2.send(new DescribeSnapshotsCommand({ OwnerIds: ['self'], Filters: [{ Name: `tag:kubernetes.io/cluster/${stack.clusterId}`, Values: ['owned'] }] }));
  return Snapshots ?? [];
}

describe('group snapshots over the local stack', () => {
  it('three claims in use on one node -> one CreateSnapshots, three member VolumeSnapshots and contents ready; each member restores; deleting the group deletes its EBS snapshots', async () => {
    const ns = 'group-one-node';
    await kubectl('create', 'namespace', ns);
    const node = stack.nodes[0]!;
    await claimsInUse(ns, 'db', node.name, ['data-a', 'data-b', 'data-c']);
    const [multi, single] = [calls('CreateSnapshots'), calls('CreateSnapshot')];

    await kubectl.create(groupYaml(ns, 'nightly', 'db'));
    const group = await waitFor(() => getJson<GroupJson>('volumegroupsnapshot', 'nightly', '-n', ns), (g) => g.status?.readyToUse === true, { what: 'VolumeGroupSnapshot nightly readyToUse', timeoutMs: 120_000 });
    expect(calls('CreateSnapshots') - multi).toBe(1);
    expect(calls('CreateSnapshot')).toBe(single);

    const contentName = group.status!.boundVolumeGroupSnapshotContentName!;
    expect(contentName).toBe(`groupsnapcontent-${group.metadata.uid}`);
    const content = await getJson<GroupContentJson>('volumegroupsnapshotcontent', contentName);
    expect(content.status).toMatchObject({ readyToUse: true, volumeGroupSnapshotHandle: contentName });
    const infos = content.status!.volumeSnapshotInfoList!;
    expect(infos).toHaveLength(3);
    const ebs = (await clusterSnapshots()).filter((s) => tagsOf(s as never)['CSIVolumeSnapshotName'] === contentName);
    expect(ebs.map((s) => s.SnapshotId).sort()).toEqual(infos.map((i) => i.snapshotHandle).sort());

    const members = await waitFor(
      () => getJson<SnapshotList>('volumesnapshot', '-n', ns),
      (list) => list.items.filter((s) => s.metadata.ownerReferences?.some((o) => o.name === 'nightly') && s.status?.readyToUse === true).length === 3,
      { what: 'three member VolumeSnapshots ready', timeoutMs: 60_000 },
    );
    const memberSnapshots = members.items.filter((s) => s.metadata.ownerReferences?.some((o) => o.name === 'nightly'));
    expect(memberSnapshots.map((s) => s.spec.source.persistentVolumeClaimName).sort()).toEqual(['data-a', 'data-b', 'data-c']);
    for (const member of memberSnapshots) {
      const memberContent = await getJson<{ metadata: { annotations?: Record<string, string> }; status?: { snapshotHandle?: string; readyToUse?: boolean } }>('volumesnapshotcontent', member.status!.boundVolumeSnapshotContentName!);
      expect(memberContent.metadata.annotations?.['groupsnapshot.storage.k8s.io/volumeGroupSnapshotHandle']).toBe(contentName);
      expect(memberContent.status).toMatchObject({ readyToUse: true });
      expect(infos.map((i) => i.snapshotHandle)).toContain(memberContent.status!.snapshotHandle);
    }

    // Restore of each member.
    for (const member of memberSnapshots) {
      const claim = `restored-${member.spec.source.persistentVolumeClaimName}`;
      await kubectl.create(`apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: ${claim}, namespace: ${ns} }
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ${IMMEDIATE_CLASS}
  resources: { requests: { storage: 4Gi } }
  dataSource: { apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: ${member.metadata.name} }
`);
      const restored = await waitClaimBound(ctx, ns, claim);
      const pv = await readVolume(stack.kube, restored.spec!.volumeName!);
      const volume = await volumeById(stack.ec2, pv.spec!.csi!.volumeHandle);
      const memberContent = await getJson<{ status?: { snapshotHandle?: string } }>('volumesnapshotcontent', member.status!.boundVolumeSnapshotContentName!);
      expect(volume?.SnapshotId).toBe(memberContent.status!.snapshotHandle);
    }

    // Deleting the group (Delete policy): its EBS snapshots go with it, and so do its members.
    await kubectl('delete', 'volumegroupsnapshot', 'nightly', '-n', ns, '--wait=false');
    const handles = new Set(infos.map((i) => i.snapshotHandle));
    await waitFor(clusterSnapshots, (all) => !all.some((s) => handles.has(s.SnapshotId!)), { what: "the group's EBS snapshots deleted", timeoutMs: 90_000 });
    await waitFor(() => kubectl('get', 'volumegroupsnapshot,volumegroupsnapshotcontent,volumesnapshot', '-n', ns, '--ignore-not-found', '-o', 'name'), (out) => !out.includes('nightly') && !out.includes(contentName) && !out.includes('volumesnapshot.'), {
      what: 'the group, its content and its members gone',
      timeoutMs: 60_000,
    });
  }, 400_000);

  it('claims in use on two nodes -> the group content refused with a message naming both nodes, no EC2 snapshot call; the group not ready', async () => {
    const ns = 'group-two-nodes';
    await kubectl('create', 'namespace', ns);
    const [first, second] = stack.nodes;
    expect(second, 'the stack has two nodes').toBeDefined();
    await claimsInUse(ns, 'web', first!.name, ['web-a', 'web-b']);
    await claimsInUse(ns, 'web', second!.name, ['web-c']);
    const [multi, single] = [calls('CreateSnapshots'), calls('CreateSnapshot')];

    await kubectl.create(groupYaml(ns, 'split', 'web'));
    const group = await waitFor(() => getJson<GroupJson>('volumegroupsnapshot', 'split', '-n', ns), (g) => !!g.status?.boundVolumeGroupSnapshotContentName, { what: 'VolumeGroupSnapshot split bound' });
    const contentName = group.status!.boundVolumeGroupSnapshotContentName!;
    const content = await waitFor(() => getJson<GroupContentJson>('volumegroupsnapshotcontent', contentName), (c) => !!c.status?.error?.message, { what: 'group content refused', timeoutMs: 60_000 });
    const message = content.status!.error!.message!;
    expect(message).toContain('attached to different nodes');
    expect(message).toContain(first!.instanceId);
    expect(message).toContain(second!.instanceId);
    const events = await eventsFor(stack.kube, 'default', 'VolumeGroupSnapshotContent', contentName);
    expect(events.some((e) => e.type === 'Warning' && e.reason === 'GroupSnapshotCreationFailed')).toBe(true);
    expect(calls('CreateSnapshots')).toBe(multi);
    expect(calls('CreateSnapshot')).toBe(single);
    const after = await waitFor(() => getJson<GroupJson>('volumegroupsnapshot', 'split', '-n', ns), (g) => !!g.status?.error?.message, { what: 'the error on the VolumeGroupSnapshot' });
    expect(after.status?.readyToUse).toBe(false);
  }, 400_000);
});
