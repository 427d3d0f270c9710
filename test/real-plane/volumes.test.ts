/**
 * volhook against the real Kubernetes control plane (kube-apiserver, -controller-manager and
 * -scheduler v1.36, built from tools/kube), the EC2 simulator, the backend and the forwarder
 * under its chart's ServiceAccount and roles: a StatefulSet's claims on a WaitForFirstConsumer
 * class provisioned, attached, detached on scale-down and deleted with the claims; an
 * Immediate class with allowedTopologies; a claim grown; and RBAC that is really enforced —
 * a verb taken from the forwarder's ClusterRole fails the flow with the API server's 403
 * surfaced, the chart's role lets it through.
 */
import type { V1ClusterRole, V1Node, V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { volumeById } from '../e2e/support/ec2.js';
import { waitFor } from '../e2e/support/wait.js';
import { startRealStack, withoutGo, type RealStackHarness } from './support.js';

const NS = 'apps';
const ZONE_KEY = 'topology.ebs.csi.aws.com/zone';

let h: RealStackHarness;

beforeAll(async () => {
  if (withoutGo) return;
  h = await startRealStack();
  await h.core.createNamespace({ body: { metadata: { name: NS } } });
  // Pods need the namespace's default ServiceAccount (the serviceaccount controller's).
  await waitFor(() => h.core.readNamespacedServiceAccount({ name: 'default', namespace: NS }), () => true, { what: `the default ServiceAccount of ${NS}` });
}, 600_000);

afterAll(async () => {
  await h?.stop();
});

const isRunning = (pod: V1Pod) => pod.status?.phase === 'Running' && (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

async function volumeIdOf(claim: V1PersistentVolumeClaim): Promise<string> {
  const pv = await h.core.readPersistentVolume({ name: claim.spec!.volumeName! });
  return pv.spec!.csi!.volumeHandle;
}

async function diskState(volumeId: string): Promise<string> {
  return (await volumeById(h.stack.ec2, volumeId))?.State ?? 'gone';
}

function statefulSet(name: string, replicas: number, storageClassName: string): V1StatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: NS },
    spec: {
      serviceName: name,
      replicas,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', 'infinity'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        },
      },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: '4Gi' } } } }],
    },
  };
}

function pod(name: string, claimName: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', 'infinity'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  };
}

describe.skipIf(withoutGo !== undefined)('the real control plane', () => {
  it('a StatefulSet of 3 on the WaitForFirstConsumer default class -> 3 claims Bound, 3 attached, 3 Running; scaled to 1 -> 2 detached; deleted with its claims -> 3 disks deleted', async () => {
    await h.apps.createNamespacedStatefulSet({ namespace: NS, body: statefulSet('web', 3, 'gp3') });
    const names = [0, 1, 2].map((i) => `data-web-${i}`);

    const claims = await waitFor(
      async () => Promise.all(names.map((name) => h.core.readNamespacedPersistentVolumeClaim({ name, namespace: NS }))),
      (list) => list.every((c) => c.status?.phase === 'Bound'),
      { what: '3 claims Bound', timeoutMs: 120_000, report: (list) => list?.map((c) => [c.metadata?.name, c.status?.phase]) },
    );
    const volumeIds = await Promise.all(claims.map(volumeIdOf));
    // The scheduler placed them, the PV controller and volhook made each disk in its node's zone.
    expect(new Set(volumeIds).size).toBe(3);

    const attachments = await waitFor(
      async () => (await h.storage.listVolumeAttachment()).items,
      (items) => items.length === 3 && items.every((va) => va.status?.attached === true),
      { what: '3 VolumeAttachments attached', timeoutMs: 120_000, report: (items) => items?.map((va) => [va.spec.source.persistentVolumeName, va.spec.nodeName, va.status?.attached]) },
    );
    expect(attachments.map((va) => va.spec.attacher)).toEqual(['ebs.csi.aws.com', 'ebs.csi.aws.com', 'ebs.csi.aws.com']);
    await waitFor(
      async () => (await h.core.listNamespacedPod({ namespace: NS, labelSelector: 'app=web' })).items,
      (pods) => pods.length === 3 && pods.every(isRunning),
      { what: '3 pods Running and Ready', timeoutMs: 60_000, report: (pods) => pods?.map((p) => [p.metadata?.name, p.status?.phase]) },
    );
    expect(await Promise.all(volumeIds.map(diskState))).toEqual(['in-use', 'in-use', 'in-use']);
    // On the Nodes: in use (the node agents' report) and attached (the attach/detach controller's).
    const unique = volumeIds.map((id) => `kubernetes.io/csi/ebs.csi.aws.com^${id}`).sort();
    // Each writes the Node's status on its own period (the attach/detach controller's node status updater), so awaited.
    const inUse = (nodes: V1Node[]) => nodes.flatMap((n) => n.status?.volumesInUse ?? []).sort();
    const attached = (nodes: V1Node[]) => nodes.flatMap((n) => (n.status?.volumesAttached ?? []).map((v) => v.name)).sort();
    const nodes = await waitFor(
      async () => (await h.core.listNode()).items,
      (list) => inUse(list).length === unique.length && attached(list).length === unique.length,
      { what: "the 3 volumes in the Nodes' volumesInUse and volumesAttached", timeoutMs: 30_000, report: (list) => list && [inUse(list), attached(list)] },
    );
    expect(inUse(nodes)).toEqual(unique);
    expect(attached(nodes)).toEqual(unique);

    // Scale to 1: pods 1 and 2 go; their volumes leave the nodes' volumesInUse and are detached.
    await h.apps.patchNamespacedStatefulSet({ name: 'web', namespace: NS, body: [{ op: 'replace', path: '/spec/replicas', value: 1 }] });
    const left = await waitFor(
      async () => (await h.storage.listVolumeAttachment()).items,
      (items) => items.length === 1,
      { what: '2 VolumeAttachments gone', timeoutMs: 120_000, report: (items) => items?.map((va) => va.spec.source.persistentVolumeName) },
    );
    expect(left[0]!.spec.source.persistentVolumeName).toBe(claims[0]!.spec!.volumeName);
    await waitFor(() => Promise.all(volumeIds.map(diskState)), (states) => states.join() === 'in-use,available,available', {
      what: 'the disks of web-1 and web-2 available in EC2, web-0 in use',
      timeoutMs: 60_000,
    });

    // Delete the StatefulSet (its pod goes with it) and the claims: the Delete class deletes the disks.
    await h.apps.deleteNamespacedStatefulSet({ name: 'web', namespace: NS });
    for (const name of names) await h.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: NS });
    await waitFor(() => Promise.all(volumeIds.map(diskState)), (states) => states.every((s) => s === 'gone'), { what: '3 disks deleted', timeoutMs: 180_000 });
    await waitFor(async () => (await h.core.listPersistentVolume()).items, (pvs) => pvs.length === 0, { what: 'the PVs gone', timeoutMs: 60_000, report: (pvs) => pvs?.map((pv) => pv.metadata?.name) });
    expect((await h.storage.listVolumeAttachment()).items).toEqual([]);
  });

  it('an Immediate class with allowedTopologies -> the disk in that zone, its pod placed there and Running; the claim grown -> the disk grown, the claim finished as kubelet would', async () => {
    const zone = h.stack.nodes[1]!.zone;
    await h.storage.createStorageClass({
      body: {
        metadata: { name: 'pinned' },
        provisioner: 'ebs.csi.aws.com',
        parameters: { type: 'gp3' },
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
        allowVolumeExpansion: true,
        allowedTopologies: [{ matchLabelExpressions: [{ key: ZONE_KEY, values: [zone] }] }],
      },
    });
    await h.core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: { metadata: { name: 'pinned' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'pinned', resources: { requests: { storage: '4Gi' } } } },
    });
    // Immediate: bound with no pod.
    const bound = await waitFor(() => h.core.readNamespacedPersistentVolumeClaim({ name: 'pinned', namespace: NS }), (c) => c.status?.phase === 'Bound', {
      what: 'the Immediate claim Bound',
      timeoutMs: 120_000,
    });
    const volumeId = await volumeIdOf(bound);
    expect((await volumeById(h.stack.ec2, volumeId))?.AvailabilityZone).toBe(zone);
    const pv = await h.core.readPersistentVolume({ name: bound.spec!.volumeName! });
    // The PV is pinned to that zone (under the well-known zone key or the driver's).
    const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
    expect(terms.map((t) => (t.matchExpressions ?? []).filter((e) => [ZONE_KEY, 'topology.kubernetes.io/zone'].includes(e.key)).map((e) => [e.operator, e.values]))).toEqual([[['In', [zone]]]]);

    await h.core.createNamespacedPod({ namespace: NS, body: pod('pinned-user', 'pinned') });
    const running = await waitFor(() => h.core.readNamespacedPod({ name: 'pinned-user', namespace: NS }), isRunning, { what: 'the pod Running', timeoutMs: 120_000 });
    expect(running.spec?.nodeName).toBe(h.stack.nodes[1]!.name);
    expect(await diskState(volumeId)).toBe('in-use');

    await h.core.patchNamespacedPersistentVolumeClaim({ name: 'pinned', namespace: NS, body: [{ op: 'replace', path: '/spec/resources/requests/storage', value: '8Gi' }] });
    const grown = await waitFor(
      () => h.core.readNamespacedPersistentVolumeClaim({ name: 'pinned', namespace: NS }),
      (c) => c.status?.capacity?.storage === '8Gi' && (c.status.conditions ?? []).length === 0,
      { what: 'the claim at 8Gi with no resize condition left', timeoutMs: 120_000, report: (c) => c?.status },
    );
    expect(grown.status?.allocatedResourceStatuses?.storage).toBeUndefined();
    expect((await volumeById(h.stack.ec2, volumeId))?.Size).toBe(8);
    expect((await h.core.readPersistentVolume({ name: bound.spec!.volumeName! })).spec?.capacity?.storage).toBe('8Gi');
    const events = await h.core.listNamespacedEvent({ namespace: NS, fieldSelector: 'involvedObject.name=pinned' });
    expect(events.items.map((e) => e.reason)).toContain('FileSystemResizeSuccessful');

    await h.core.deleteNamespacedPod({ name: 'pinned-user', namespace: NS });
    await h.core.deleteNamespacedPersistentVolumeClaim({ name: 'pinned', namespace: NS });
    await waitFor(() => diskState(volumeId), (s) => s === 'gone', { what: 'the pinned disk deleted', timeoutMs: 120_000 });
  });

  it("the forwarder's identity -> may not read Secrets in kube-system (SelfSubjectAccessReview and a real GET); may create PVs (the control); its token renewed is the same identity", async () => {
    const forwarder = h.stack.real.plane.rest(h.stack.real.forwarder.volume.token());
    const review = async (resourceAttributes: Record<string, string>) =>
      (
        await forwarder.request<{ status: { allowed: boolean } }>('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
          body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes } },
        })
      ).status.allowed;
    expect(await review({ namespace: 'kube-system', verb: 'get', resource: 'secrets' })).toBe(false);
    expect(await review({ namespace: 'kube-system', verb: 'list', resource: 'secrets' })).toBe(false);
    expect(await review({ verb: 'create', resource: 'persistentvolumes' })).toBe(true);
    const who = await forwarder.request<{ status: { userInfo: { username: string } } }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(who.status.userInfo.username).toBe('system:serviceaccount:volhook-system:volhook-forwarder');

    // Its volume's token is replaced as kubelet replaces it; the new one is the same identity.
    const volume = h.stack.real.forwarder.volume;
    const before = volume.token();
    await volume.rotate();
    expect(volume.token()).not.toBe(before);
    expect(readFileSync(join(volume.dir, 'token'), 'utf8')).toBe(volume.token());
    const again = await h.stack.real.plane.rest(volume.token()).request<{ status: { userInfo: { username: string } } }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(again.status.userInfo.username).toBe('system:serviceaccount:volhook-system:volhook-forwarder');

    const get = (path: string) => forwarder.request('GET', path).then(() => 200, (err: { code?: number }) => err.code);
    expect(await get('/api/v1/namespaces/kube-system/secrets')).toBe(403);
    expect(await get('/api/v1/namespaces/kube-system/secrets/anything')).toBe(403);
    expect(await get('/api/v1/persistentvolumes')).toBe(200);
  });

  it("a node agent's identity -> its own Node's status, not another's (Node authorizer and NodeRestriction, as a kubelet's)", async () => {
    const [mine, other] = h.stack.nodes;
    const agent = h.stack.real.plane.rest(h.stack.real.plane.tokens.get(`system:node:${mine!.name}`));
    const patch = (name: string) =>
      agent.request('PATCH', `/api/v1/nodes/${name}/status`, { body: { status: {} }, contentType: 'application/merge-patch+json' }).then(
        () => 200,
        (err: { code?: number }) => err.code,
      );
    expect(await patch(mine!.name)).toBe(200);
    expect(await patch(other!.name)).toBe(403);
    const read = (path: string) => agent.request('GET', path).then(() => 200, (err: { code?: number }) => err.code);
    expect(await read('/api/v1/namespaces/kube-system/secrets/anything')).toBe(403);
    expect(await read(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${mine!.name}`)).toBe(200);
  });

  it("`create` taken from the forwarder's ClusterRole -> the claim's PV is refused with the API server's 403, surfaced in a metric, an Event and a log line naming verb and resource; the chart's role back -> Bound", async () => {
    const chartRole = await h.rbac.readClusterRole({ name: 'volhook-forwarder' });
    const without: V1ClusterRole = {
      ...chartRole,
      rules: chartRole.rules!.map((rule) => (rule.resources?.includes('persistentvolumes') ? { ...rule, verbs: rule.verbs.filter((v) => v !== 'create') } : rule)),
    };
    expect(without.rules).not.toEqual(chartRole.rules);
    await h.rbac.replaceClusterRole({ name: 'volhook-forwarder', body: without });

    await h.core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: { metadata: { name: 'refused' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'io2', resources: { requests: { storage: '4Gi' } } } },
    });
    const event = await waitFor(
      async () => (await h.core.listNamespacedEvent({ namespace: NS, fieldSelector: 'involvedObject.name=refused,reason=WriteBackFailed' })).items,
      (items) => items.length > 0,
      { what: 'a WriteBackFailed Event on the claim', timeoutMs: 120_000 },
    );
    expect(event[0]!.type).toBe('Warning');
    expect(event[0]!.message).toMatch(/cannot create resource "persistentvolumes"/);
    const line = h.logs.find((l) => l.level === 'error' && l.fields.op === 'createPersistentVolume');
    expect(line, JSON.stringify(h.logs.slice(-5))).toBeDefined();
    expect(line!.fields).toMatchObject({ verb: 'create', resource: 'persistentvolumes', status: 403 });
    expect(String(line!.fields.err)).toContain('system:serviceaccount:volhook-system:volhook-forwarder');
    expect(await h.metrics()).toMatch(/volhook_forwarder_write_failures_total\{op="createPersistentVolume"\} [1-9]/);
    expect((await h.core.readNamespacedPersistentVolumeClaim({ name: 'refused', namespace: NS })).status?.phase).toBe('Pending');

    // The control: the chart's role again, and the same claim goes through on a retry.
    await h.rbac.replaceClusterRole({ name: 'volhook-forwarder', body: { ...chartRole, metadata: { ...chartRole.metadata, resourceVersion: undefined } } });
    const bound = await waitFor(() => h.core.readNamespacedPersistentVolumeClaim({ name: 'refused', namespace: NS }), (c) => c.status?.phase === 'Bound', {
      what: "the claim Bound under the chart's role",
      timeoutMs: 120_000,
    });
    const volumeId = await volumeIdOf(bound);
    await h.core.deleteNamespacedPersistentVolumeClaim({ name: 'refused', namespace: NS });
    await waitFor(() => diskState(volumeId), (s) => s === 'gone', { what: 'its disk deleted', timeoutMs: 120_000 });
  });
});
