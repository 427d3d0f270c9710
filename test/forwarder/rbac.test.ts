/**
 * The forwarder's ClusterRole (infra/forwarder/rbac.yaml) against the API calls it really
 * makes: a full run (informers + every write kind, including the retry and repeat paths) is
 * recorded by the local API server, and the role must allow each call and nothing unused.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Annotations, Finalizers, type Write } from '../../lib/contract/index.js';
import { startForwarder, type Forwarder } from '../../lib/forwarder/index.js';
import { silentLogger } from '../../lib/forwarder/logger.js';
import { applyWrites } from '../../lib/kube/index.js';
import { startKube, type KubeHarness } from '../kube/harness.js';
import { createPv, pvcObject, vaObject } from '../kube/fixtures.js';
import { eventually, startFakeBackend, type FakeBackend } from './fake-backend.js';

interface Call {
  verb: string;
  group: string;
  resource: string;
}

/** `GET /apis/storage.k8s.io/v1/volumeattachments/x/status` → patch storage.k8s.io volumeattachments/status. */
function callOf(method: string, url: string): Call {
  const parsed = new URL(url, 'http://x');
  const parts = parsed.pathname.split('/').filter(Boolean);
  let group: string;
  let rest: string[];
  if (parts[0] === 'api') [group, rest] = ['', parts.slice(2)];
  else [group, rest] = [parts[1] ?? '', parts.slice(3)];
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource = '', name, subresource] = rest;
  const verb =
    method === 'GET' ? (name ? 'get' : parsed.searchParams.get('watch') === 'true' ? 'watch' : 'list')
    : method === 'POST' ? 'create'
    : method === 'PATCH' ? 'patch'
    : method === 'PUT' ? 'update'
    : method === 'DELETE' ? (name ? 'delete' : 'deletecollection')
    : method.toLowerCase();
  return { verb, group, resource: subresource ? `${resource}/${subresource}` : resource };
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

async function clusterRoleRules(): Promise<Rule[]> {
  const text = await readFile(new URL('../../infra/forwarder/rbac.yaml', import.meta.url), 'utf8');
  const role = parseAllDocuments(text)
    .map((doc) => doc.toJS() as { kind?: string; rules?: Rule[] })
    .find((doc) => doc.kind === 'ClusterRole');
  // Found, and with rules: otherwise every check below would pass with nothing checked.
  expect(role, 'the ClusterRole in infra/forwarder/rbac.yaml').toBeDefined();
  expect(role?.rules?.length ?? 0, 'rules of the ClusterRole').toBeGreaterThan(0);
  return role?.rules ?? [];
}

const key = (c: Call) => `${c.verb} ${c.group || 'core'}/${c.resource}`;

let kube: KubeHarness;
let fake: FakeBackend;
let forwarder: Forwarder;

beforeAll(async () => {
  kube = await startKube();
  fake = await startFakeBackend({ secrets: ['rbac-test-secret-0123456789'] });
  forwarder = await startForwarder(
    {
      apiUrl: fake.url,
      clusterId: 'test-cluster',
      secret: 'rbac-test-secret-0123456789',
      port: 0,
      listenHost: '127.0.0.1',
      resyncSeconds: 3600,
    },
    { kubeConfig: kube.kubeConfig, logger: silentLogger },
  );
  await eventually(() => forwarder.ready(), 5_000, 'synced informers');

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
  kube.store.create('persistentvolumeclaims', {
    ...pvcObject('rbac-bound', 'default', { [Annotations.storageProvisioner]: 'ebs.csi.aws.com' }),
    spec: { ...pvcObject('rbac-bound').spec, volumeName: 'pvc-elsewhere', volumeAttributesClassName: 'missing' },
  });
  await eventually(() => fake.items.some((i) => i.kind === 'PersistentVolumeClaim' && i.pvc.metadata.name === 'rbac-bound'), 5_000, 'bound claim sent');
  // The server logs a watch when it ends it (not when the client leaves): close the server
  // first, which ends the seven watches, then stop the forwarder.
  await kube.close();
  await forwarder.stop();
  await eventually(() => kube.requests.filter((r) => r.url.includes('watch=true')).length >= 7, 5_000, 'watches logged');
});

afterAll(async () => {
  await forwarder?.stop();
  await fake?.close();
  await kube?.close();
});

describe('ClusterRole volhook-forwarder', () => {
  it('every API call of a full run -> allowed by a rule', async () => {
    const rules = await clusterRoleRules();
    const calls = kube.requests.map((r) => callOf(r.method, r.url));
    const denied = calls.filter(
      (c) => !rules.some((rule) => rule.apiGroups.includes(c.group) && rule.resources.includes(c.resource) && rule.verbs.includes(c.verb)),
    );
    expect(denied.map(key)).toEqual([]);
    expect(calls.length).toBeGreaterThan(20);
  });

  it('every verb the role grants -> used by the run (nothing more than needed)', async () => {
    const rules = await clusterRoleRules();
    const used = new Set(kube.requests.map((r) => key(callOf(r.method, r.url))));
    const granted = rules.flatMap((rule) =>
      rule.apiGroups.flatMap((group) => rule.resources.flatMap((resource) => rule.verbs.map((verb) => key({ verb, group, resource })))),
    );
    expect(granted.length).toBeGreaterThan(0);
    expect(granted.filter((g) => !used.has(g))).toEqual([]);
    expect(granted.length).toBe(new Set(granted).size); // no rule repeats another
  });

  it('request paths -> verbs and resources as the API server authorizes them', () => {
    expect(callOf('GET', '/api/v1/persistentvolumeclaims?watch=true&resourceVersion=5')).toEqual({ verb: 'watch', group: '', resource: 'persistentvolumeclaims' });
    expect(callOf('PATCH', '/apis/storage.k8s.io/v1/volumeattachments/csi-1/status')).toEqual({ verb: 'patch', group: 'storage.k8s.io', resource: 'volumeattachments/status' });
    expect(callOf('GET', '/api/v1/namespaces/default/persistentvolumeclaims/data')).toEqual({ verb: 'get', group: '', resource: 'persistentvolumeclaims' });
    expect(callOf('POST', '/api/v1/namespaces/default/events')).toEqual({ verb: 'create', group: '', resource: 'events' });
  });
});
