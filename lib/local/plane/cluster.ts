/**
 * What the real plane is given, as its administrator, before volhook runs: the CSIDriver and
 * StorageClasses of the simulated cluster (stack/cluster-objects.ts, the same as the
 * simulator's), the VolumeSnapshot CRDs from external-snapshotter's module, the forwarder's
 * ServiceAccount and roles as the chart renders them, and a ServiceAccount token for it from
 * the TokenRequest API (token-volume.ts). Also the node-lifecycle controller's one act the nodes need: the
 * not-ready taint removed once a node is Ready.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { GROUP_SNAPSHOT_API_GROUP, SNAPSHOT_API_GROUP } from '../../contract/index.js';
import type { KubeRest } from '../../forwarder/kube/rest.js';
import { MediaTypes } from '../../forwarder/kube/rest.js';
import { csiDriverObject, storageClassObjects } from '../stack/cluster-objects.js';

/** An object to create: what `helm template` or a CRD file holds. */
export interface KubeManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** The plural and scope of each kind created here; another kind is refused, named. */
const RESOURCES: Record<string, { plural: string; namespaced: boolean }> = {
  Namespace: { plural: 'namespaces', namespaced: false },
  ServiceAccount: { plural: 'serviceaccounts', namespaced: true },
  ClusterRole: { plural: 'clusterroles', namespaced: false },
  ClusterRoleBinding: { plural: 'clusterrolebindings', namespaced: false },
  Role: { plural: 'roles', namespaced: true },
  RoleBinding: { plural: 'rolebindings', namespaced: true },
  StorageClass: { plural: 'storageclasses', namespaced: false },
  CSIDriver: { plural: 'csidrivers', namespaced: false },
  CustomResourceDefinition: { plural: 'customresourcedefinitions', namespaced: false },
};

/** The collection path an object is created at: `/api/v1/namespaces/x/serviceaccounts`, `/apis/rbac.authorization.k8s.io/v1/clusterroles`… */
export function collectionPath(manifest: Pick<KubeManifest, 'apiVersion' | 'kind' | 'metadata'>): string {
  const resource = RESOURCES[manifest.kind];
  if (!resource) throw new Error(`cannot create a ${manifest.kind} (${manifest.apiVersion}): not a kind the real plane's setup creates`);
  const base = manifest.apiVersion.includes('/') ? `/apis/${manifest.apiVersion}` : `/api/${manifest.apiVersion}`;
  if (!resource.namespaced) return `${base}/${resource.plural}`;
  if (!manifest.metadata.namespace) throw new Error(`${manifest.kind} ${manifest.metadata.name} names no namespace`);
  return `${base}/namespaces/${manifest.metadata.namespace}/${resource.plural}`;
}

export async function createAll(rest: KubeRest, manifests: readonly KubeManifest[]): Promise<void> {
  for (const manifest of manifests) await rest.request('POST', collectionPath(manifest), { body: manifest });
}

/** The CSIDriver and the StorageClasses (`gp3` the default), as the simulated API is seeded. */
export async function createStorageObjects(rest: KubeRest): Promise<void> {
  await createAll(rest, [csiDriverObject, ...storageClassObjects] as KubeManifest[]);
}

/** The API groups whose CRDs external-snapshotter's `config/crd/` holds, each installed. */
const SNAPSHOT_CRD_GROUPS = [SNAPSHOT_API_GROUP, GROUP_SNAPSHOT_API_GROUP] as const;

/**
 * The snapshot and group snapshot CRDs of `crdDir` (external-snapshotter's `config/crd/`),
 * created and waited for until Established. Both, as external-snapshotter installs them:
 * snapshot-controller v8.7.0 serves group snapshots by default and, without their CRDs, waits
 * for them 30 s at start before it goes on without.
 */
export async function installSnapshotCrds(rest: KubeRest, crdDir: string, timeoutMs = 30_000): Promise<string[]> {
  const all = await readdir(crdDir);
  const files: string[] = [];
  for (const group of SNAPSHOT_CRD_GROUPS) {
    const found = all.filter((f) => f.startsWith(`${group}_`) && f.endsWith('.yaml')).sort();
    if (found.length === 0) throw new Error(`no ${group} CRDs in ${crdDir}`);
    files.push(...found);
  }
  const names: string[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(crdDir, file), 'utf8'))) {
      const crd = doc.toJS() as KubeManifest | null;
      if (!crd) continue;
      if (crd.kind !== 'CustomResourceDefinition') throw new Error(`${file} holds a ${crd.kind}, not a CustomResourceDefinition`);
      await createAll(rest, [crd]);
      names.push(crd.metadata.name);
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (const name of names) {
    for (;;) {
      const crd = await rest.request<{ status?: { conditions?: { type: string; status: string }[] } }>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} not Established within ${timeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return names;
}

const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';

/**
 * The node-lifecycle controller's part for a node whose status is Ready: the not-ready taint
 * the API server's admission put on it at registration goes (that controller is not run: with
 * no kubelet it would evict). Waits for the node to be registered and Ready.
 */
export async function untaintReadyNode(rest: KubeRest, name: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    type NodeObject = { metadata: { resourceVersion: string }; spec?: { taints?: { key: string; effect: string }[] }; status?: { conditions?: { type: string; status: string }[] } };
    const node = await rest.request<NodeObject>('GET', `/api/v1/nodes/${name}`).catch(() => undefined);
    const ready = node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (node && ready) {
      const taints = node.spec?.taints ?? [];
      const kept = taints.filter((t) => t.key !== NOT_READY_TAINT);
      if (kept.length === taints.length) return;
      // The resourceVersion makes it a compare-and-swap: a taint added meanwhile is not lost.
      await rest.request('PATCH', `/api/v1/nodes/${name}`, {
        body: { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: kept.length > 0 ? kept : null } },
        contentType: MediaTypes.mergePatch,
      });
      return;
    }
    if (Date.now() > deadline) throw new Error(`node ${name} not registered Ready within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The kinds of the chart that make the forwarder's identity; the rest (its Deployment…) is not run here. */
const IDENTITY_KINDS = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];

export interface ForwarderIdentity {
  namespace: string;
  serviceAccount: string;
  /** `system:serviceaccount:NAMESPACE:NAME` */
  username: string;
}

/**
 * The forwarder's ServiceAccount and roles from the chart's render (`chart`: every object of a
 * `helm template`), created in its namespace. Its token comes from the TokenRequest API
 * (token-volume.ts), as kubelet gets one for its pod.
 */
export async function createForwarderIdentity(rest: KubeRest, chart: readonly KubeManifest[]): Promise<ForwarderIdentity> {
  const identity = chart.filter((m) => IDENTITY_KINDS.includes(m.kind));
  const accounts = identity.filter((m) => m.kind === 'ServiceAccount');
  if (accounts.length !== 1) throw new Error(`the chart rendered ${accounts.length} ServiceAccounts, not one`);
  const account = accounts[0]!;
  const namespace = account.metadata.namespace;
  if (!namespace) throw new Error(`the chart's ServiceAccount ${account.metadata.name} names no namespace`);
  for (const kind of ['ClusterRole', 'ClusterRoleBinding']) {
    if (!identity.some((m) => m.kind === kind)) throw new Error(`the chart rendered no ${kind}`);
  }
  await createAll(rest, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }]);
  // Roles before their bindings, as kubectl apply would order them.
  const order = (m: KubeManifest) => IDENTITY_KINDS.indexOf(m.kind);
  await createAll(rest, [...identity].sort((a, b) => order(a) - order(b)));
  const name = account.metadata.name;
  return { namespace, serviceAccount: name, username: `system:serviceaccount:${namespace}:${name}` };
}
