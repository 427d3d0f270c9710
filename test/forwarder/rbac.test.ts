/**
 * The forwarder's ClusterRole and leader-election Role, as the chart renders them
 * (charts/volhook-forwarder/templates/rbac.yaml, release volhook-forwarder), against the
 * API calls it really makes: a full run (informers, leader election with a renewal and the
 * release, every write kind including the retry and repeat paths) is recorded by the local
 * API server, and the roles must allow each call and grant nothing unused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerEnv, renderChart, type Manifest } from '../../infra/tools/chart.js';
import { Annotations, Finalizers, GroupSnapshotAnnotations, GroupSnapshotFinalizers, SnapshotAnnotations, SnapshotFinalizers, SourceFinalizers, type Write } from '../../lib/contract/index.js';
import { startForwarder, type Forwarder } from '../../lib/forwarder/index.js';
import { silentLogger } from '../../lib/forwarder/logger.js';
import { applyWrites } from '../../lib/kube/index.js';
import { startKubeApiServer } from '../../lib/local/kube/index.js';
import { startKube, type KubeHarness } from '../kube/harness.js';
import { createPv, pvcObject, snapshotContentObject, vaObject } from '../kube/fixtures.js';
import { eventually, startFakeBackend, type FakeBackend } from './fake-backend.js';

interface Call {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
  /** The object's name, when the URL names one (never for create or list). */
  name?: string;
}

/** `GET /apis/storage.k8s.io/v1/volumeattachments/x/status` → patch storage.k8s.io volumeattachments/status. */
function callOf(method: string, url: string): Call {
  const parsed = new URL(url, 'http://x');
  const parts = parsed.pathname.split('/').filter(Boolean);
  let group: string;
  let rest: string[];
  if (parts[0] === 'api') [group, rest] = ['', parts.slice(2)];
  else [group, rest] = [parts[1] ?? '', parts.slice(3)];
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) [namespace, rest] = [rest[1], rest.slice(2)];
  const [resource = '', name, subresource] = rest;
  const verb =
    method === 'GET' ? (name ? 'get' : parsed.searchParams.get('watch') === 'true' ? 'watch' : 'list')
    : method === 'POST' ? 'create'
    : method === 'PATCH' ? 'patch'
    : method === 'PUT' ? 'update'
    : method === 'DELETE' ? (name ? 'delete' : 'deletecollection')
    : method.toLowerCase();
  const call: Call = { verb, group, resource: subresource ? `${resource}/${subresource}` : resource };
  if (namespace !== undefined) call.namespace = namespace;
  if (name !== undefined) call.name = name;
  return call;
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
  /** Set for a Role's rules: they hold in its namespace only. */
  namespace?: string;
}

const chart = renderChart();

/** The rules of the ClusterRole and of every Role, a Role's rules carrying its namespace. */
async function roleRules(): Promise<Rule[]> {
  const roles = chart.filter((doc): doc is Manifest & { rules?: Rule[] } => doc.kind === 'ClusterRole' || doc.kind === 'Role');
  // Found, and with rules: otherwise every check below would pass with nothing checked.
  expect(roles.map((r) => r.kind).sort(), "the chart's roles").toEqual(['ClusterRole', 'Role']);
  for (const role of roles) expect(role.rules?.length ?? 0, `rules of the ${role.kind}`).toBeGreaterThan(0);
  return roles.flatMap((role) => (role.rules ?? []).map((rule) => (role.kind === 'Role' ? { ...rule, namespace: role.metadata?.namespace ?? '' } : rule)));
}

/** As the API server's RBAC authorizer: group, resource, verb, the Role's namespace, and resourceNames (which never match a call without a name). */
function allows(rule: Rule, c: Call): boolean {
  if (!rule.apiGroups.includes(c.group) || !rule.resources.includes(c.resource) || !rule.verbs.includes(c.verb)) return false;
  if (rule.namespace !== undefined && rule.namespace !== c.namespace) return false;
  return rule.resourceNames === undefined || (c.name !== undefined && rule.resourceNames.includes(c.name));
}

const key = (c: Call) => `${c.verb} ${c.group || 'core'}/${c.resource}${c.name ? ` ${c.name}` : ''}`;

/** Each single grant of a rule: one verb on one resource (and one name, with resourceNames). */
function grants(rule: Rule): { key: string; rule: Rule }[] {
  return rule.apiGroups.flatMap((group) =>
    rule.resources.flatMap((resource) =>
      rule.verbs.flatMap((verb) =>
        (rule.resourceNames ?? [undefined]).map((name) => ({
          key: `${rule.namespace ? `${rule.namespace}: ` : ''}${verb} ${group || 'core'}/${resource}${name ? ` ${name}` : ''}`,
          rule: { ...rule, apiGroups: [group], resources: [resource], verbs: [verb], ...(name ? { resourceNames: [name] } : {}) },
        })),
      ),
    ),
  );
}

let kube: KubeHarness;
let fake: FakeBackend;
let forwarder: Forwarder;

const LEASE_NAMESPACE = 'volhook-system';
const LEASE_NAME = containerEnv(chart).VOLHOOK_LEASE_NAME!;

beforeAll(async () => {
  kube = await startKube();
  kube.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: LEASE_NAMESPACE } });
  fake = await startFakeBackend({ secrets: ['rbac-test-secret-0123456789'] });
  forwarder = await startForwarder(
    {
      apiUrl: fake.url,
      clusterId: 'test-cluster',
      secret: 'rbac-test-secret-0123456789',
      port: 0,
      listenHost: '127.0.0.1',
      resyncSeconds: 3600,
      // As the chart's Deployment runs it: leader election on its Lease, short timings.
      leaderElect: true,
      leaseName: LEASE_NAME,
      leaseNamespace: LEASE_NAMESPACE,
      leaseDurationSeconds: 1,
      renewDeadlineSeconds: 0.6,
      retryPeriodSeconds: 0.2,
    },
    { kubeConfig: kube.kubeConfig, logger: silentLogger },
  );
  await eventually(() => forwarder.ready() && forwarder.leading(), 5_000, 'synced informers, leading');

  // Every write kind, through every path that calls the API differently.
  await applyWrites(kube.clients, [createPv('pvc-rbac')]);
  const pv = kube.store.get('persistentvolumes', 'pvc-rbac')!;
  const pvc = kube.store.create('persistentvolumeclaims', pvcObject('rbac', 'default', { [Annotations.selectedNode]: 'n1' }));
  const va = kube.store.create('volumeattachments', vaObject('csi-rbac', 'pvc-rbac'));
  const event: Write = {
    op: 'createEvent',
    involvedObject: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', name: 'rbac', namespace: 'default' },
    type: 'Normal',
    reason: 'Provisioning',
    message: 'External provisioner is provisioning volume for claim "default/rbac"',
  };
  await applyWrites(kube.clients, [
    { op: 'addFinalizer', target: { kind: 'PersistentVolume', name: 'pvc-rbac' }, finalizer: Finalizers.provisioner },
    { op: 'addFinalizer', target: { kind: 'PersistentVolumeClaim', name: 'rbac', namespace: 'default' }, finalizer: 'example.com/x' },
    { op: 'addFinalizer', target: { kind: 'VolumeAttachment', name: 'csi-rbac' }, finalizer: Finalizers.attacher('ebs.csi.aws.com') },
    { op: 'updateVolumeAttachmentStatus', name: 'csi-rbac', uid: va.metadata.uid, status: { attached: true } },
    { op: 'removePvcAnnotation', namespace: 'default', name: 'rbac', uid: pvc.metadata.uid, annotation: Annotations.selectedNode },
    event,
    event,
    { op: 'patchPersistentVolume', name: 'pvc-rbac', uid: pv.metadata.uid, capacity: '40Gi', volumeAttributesClassName: 'fast' },
    { op: 'removeFinalizer', target: { kind: 'PersistentVolume', name: 'pvc-rbac' }, finalizer: Finalizers.provisioner },
    { op: 'deletePersistentVolume', name: 'pvc-rbac', uid: pv.metadata.uid },
  ]);
  // The claim's status is written only on the version it was decided from.
  await applyWrites(kube.clients, [
    {
      op: 'patchPersistentVolumeClaimStatus',
      name: 'rbac',
      namespace: 'default',
      uid: pvc.metadata.uid,
      resourceVersion: kube.store.get('persistentvolumeclaims', 'rbac', 'default')!.metadata.resourceVersion!,
      status: { allocatedResources: { storage: '40Gi' }, allocatedResourceStatuses: { storage: 'ControllerResizeInProgress' } },
    },
  ]);
  expect(kube.store.get('persistentvolumeclaims', 'rbac', 'default')!.status).toMatchObject({ allocatedResources: { storage: '40Gi' } });
  // A bound claim of ours asking for a VolumeAttributesClass the cache does not hold: the
  // forwarder confirms it is missing with a live read before sending it.
  const boundClaim = kube.store.create('persistentvolumeclaims', {
    ...pvcObject('rbac-bound', 'default', { [Annotations.storageProvisioner]: 'ebs.csi.aws.com' }),
    spec: { ...pvcObject('rbac-bound').spec, volumeName: 'pvc-elsewhere', volumeAttributesClassName: 'missing' },
  });
  kube.store.updateStatus('persistentvolumeclaims', { ...boundClaim, status: { phase: 'Bound' } });
  await eventually(() => fake.items.some((i) => i.kind === 'PersistentVolumeClaim' && i.pvc.metadata.name === 'rbac-bound'), 5_000, 'bound claim sent');
  // The sidecar's writes on a snapshot content.
  const content = kube.store.create('volumesnapshotcontents' as never, snapshotContentObject('snapcontent-rbac', 'rbac') as never) as { metadata: { uid: string } };
  const contentRef = { kind: 'VolumeSnapshotContent' as const, name: 'snapcontent-rbac', uid: content.metadata.uid };
  await applyWrites(kube.clients, [
    { op: 'setAnnotation', target: contentRef, key: SnapshotAnnotations.beingCreated, value: 'yes' },
    { op: 'addFinalizer', target: contentRef, finalizer: SnapshotFinalizers.contentBound },
    { op: 'updateVolumeSnapshotContentStatus', name: 'snapcontent-rbac', uid: content.metadata.uid, status: { snapshotHandle: 'snap-0123456789abcdef0', readyToUse: false, restoreSize: 2 ** 30, creationTime: 1_767_225_600_000_000_000 } },
    { op: 'removeAnnotation', target: contentRef, key: SnapshotAnnotations.beingCreated },
    { op: 'removeFinalizer', target: contentRef, finalizer: SnapshotFinalizers.contentBound },
  ]);
  // The sidecar's writes on a group snapshot content.
  const groupContent = kube.store.create('volumegroupsnapshotcontents', {
    apiVersion: 'groupsnapshot.storage.k8s.io/v1',
    kind: 'VolumeGroupSnapshotContent',
    metadata: { name: 'groupsnapcontent-rbac' },
    spec: { deletionPolicy: 'Delete', driver: 'ebs.csi.aws.com', source: { volumeHandles: ['vol-0123456789abcdef0'] }, volumeGroupSnapshotRef: { name: 'rbac-group', namespace: 'default' } },
  });
  const groupRef = { kind: 'VolumeGroupSnapshotContent' as const, name: 'groupsnapcontent-rbac', uid: groupContent.metadata.uid };
  await applyWrites(kube.clients, [
    { op: 'setAnnotation', target: groupRef, key: GroupSnapshotAnnotations.beingCreated, value: 'yes' },
    { op: 'addFinalizer', target: groupRef, finalizer: GroupSnapshotFinalizers.contentBound },
    { op: 'updateVolumeGroupSnapshotContentStatus', name: 'groupsnapcontent-rbac', uid: groupContent.metadata.uid, status: { volumeGroupSnapshotHandle: 'groupsnapcontent-rbac', readyToUse: false } },
    { op: 'removeAnnotation', target: groupRef, key: GroupSnapshotAnnotations.beingCreated },
    { op: 'removeFinalizer', target: groupRef, finalizer: GroupSnapshotFinalizers.contentBound },
  ]);
  expect(kube.store.get('volumegroupsnapshotcontents', 'groupsnapcontent-rbac')!.status).toEqual({ volumeGroupSnapshotHandle: 'groupsnapcontent-rbac', readyToUse: false });
  // The source protection of a restore, on the VolumeSnapshot.
  const snapshot = kube.store.create('volumesnapshots' as never, {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name: 'rbac-snap', namespace: 'default' },
    spec: { source: { persistentVolumeClaimName: 'rbac' } },
  } as never) as { metadata: { uid: string } };
  const snapshotRef = { kind: 'VolumeSnapshot' as const, name: 'rbac-snap', namespace: 'default', uid: snapshot.metadata.uid };
  await applyWrites(kube.clients, [
    { op: 'addFinalizer', target: snapshotRef, finalizer: SourceFinalizers.snapshot },
    { op: 'removeFinalizer', target: snapshotRef, finalizer: SourceFinalizers.snapshot },
  ]);
  // A renewal (PUT) of the Lease.
  const leasePuts = () => kube.requests.filter((r) => r.method === 'PUT' && r.url.includes('/leases/')).length;
  await eventually(() => leasePuts() > 0, 5_000, 'a renewal');
  // The server logs a watch when it ends it (not when the client leaves): close the server,
  // which ends the twelve watches; then a server on the same port and store answers the rest.
  await kube.close();
  await eventually(() => kube.requests.filter((r) => r.url.includes('watch=true')).length >= 12, 5_000, 'watches logged');
  const renewals = leasePuts();
  const again = await startKubeApiServer({ store: kube.store, port: Number(new URL(kube.url).port), host: '127.0.0.1', onRequest: (line) => kube.requests.push(line) });
  await forwarder.stop(); // releases the Lease: one more PUT
  await again.close();
  expect(leasePuts()).toBeGreaterThan(renewals);
  expect(kube.store.get('leases', LEASE_NAME, LEASE_NAMESPACE)?.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
});

afterAll(async () => {
  await forwarder?.stop();
  await fake?.close();
  await kube?.close();
});

describe('ClusterRole volhook-forwarder and Role volhook-forwarder-leader-election', () => {
  it('every API call of a full run -> allowed by a rule', async () => {
    const rules = await roleRules();
    const calls = kube.requests.map((r) => callOf(r.method, r.url));
    const denied = calls.filter((c) => !rules.some((rule) => allows(rule, c)));
    expect(denied.map(key)).toEqual([]);
    expect(calls.length).toBeGreaterThan(20);
    // Leader election took part: the Lease read (404), created, renewed and released.
    expect(new Set(calls.filter((c) => c.resource === 'leases').map((c) => c.verb))).toEqual(new Set(['get', 'create', 'update']));
  });

  it('every verb the roles grant -> used by the run (nothing more than needed)', async () => {
    const calls = kube.requests.map((r) => callOf(r.method, r.url));
    const granted = (await roleRules()).flatMap(grants);
    expect(granted.length).toBeGreaterThan(0);
    expect(granted.filter((g) => !calls.some((c) => allows(g.rule, c))).map((g) => g.key)).toEqual([]);
    const keys = granted.map((g) => g.key);
    expect(keys.length).toBe(new Set(keys).size); // no rule repeats another
  });

  it('the Lease by name -> get and update limited to the one the forwarder uses; create (not limitable by name) only in its namespace', async () => {
    const rules = (await roleRules()).filter((r) => r.resources.includes('leases'));
    const byName = rules.filter((r) => r.resourceNames);
    expect(byName.flatMap((r) => r.resourceNames)).toEqual([LEASE_NAME]);
    expect(byName.flatMap((r) => r.verbs).sort()).toEqual(['get', 'update']);
    expect(rules.filter((r) => !r.resourceNames).flatMap((r) => r.verbs)).toEqual(['create']);
    expect(rules.every((r) => r.namespace === LEASE_NAMESPACE)).toBe(true);
    expect(allows(byName[0]!, { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: LEASE_NAMESPACE, name: 'someone-elses' })).toBe(false);
  });

  it("the bindings -> each role bound to the ServiceAccount the chart's Deployment runs as, and to nothing else", () => {
    const deployment = chart.find((m) => m.kind === 'Deployment') as unknown as { spec: { template: { spec: { serviceAccountName: string } } } };
    const account = { kind: 'ServiceAccount', name: deployment.spec.template.spec.serviceAccountName, namespace: LEASE_NAMESPACE };
    expect(chart.filter((m) => m.kind === 'ServiceAccount').map((m) => m.metadata.name)).toEqual([account.name]);
    const bindings = chart.filter((m) => m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding') as unknown as { kind: string; roleRef: { kind: string; name: string }; subjects: unknown[] }[];
    const roleNames = (kind: string) => chart.filter((m) => m.kind === kind).map((m) => m.metadata.name);
    expect(bindings.map((b) => b.kind).sort()).toEqual(['ClusterRoleBinding', 'RoleBinding']);
    for (const binding of bindings) {
      expect(binding.subjects).toEqual([account]);
      expect(roleNames(binding.roleRef.kind)).toContain(binding.roleRef.name);
    }
  });

  it('request paths -> verbs and resources as the API server authorizes them', () => {
    expect(callOf('GET', '/api/v1/persistentvolumeclaims?watch=true&resourceVersion=5')).toEqual({ verb: 'watch', group: '', resource: 'persistentvolumeclaims' });
    expect(callOf('PATCH', '/apis/storage.k8s.io/v1/volumeattachments/csi-1/status')).toEqual({ verb: 'patch', group: 'storage.k8s.io', resource: 'volumeattachments/status', name: 'csi-1' });
    expect(callOf('GET', '/api/v1/namespaces/default/persistentvolumeclaims/data')).toEqual({ verb: 'get', group: '', resource: 'persistentvolumeclaims', namespace: 'default', name: 'data' });
    expect(callOf('POST', '/api/v1/namespaces/default/events')).toEqual({ verb: 'create', group: '', resource: 'events', namespace: 'default' });
    expect(callOf('PUT', '/apis/coordination.k8s.io/v1/namespaces/volhook-system/leases/volhook-forwarder')).toEqual({
      verb: 'update',
      group: 'coordination.k8s.io',
      resource: 'leases',
      namespace: 'volhook-system',
      name: 'volhook-forwarder',
    });
  });
});
