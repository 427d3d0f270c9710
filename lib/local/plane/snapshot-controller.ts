/**
 * external-snapshotter's common snapshot-controller on the real plane (optional: the e2e suite
 * runs it, `npm start` does not): it binds VolumeSnapshots to VolumeSnapshotContents, makes a
 * content for each dynamic snapshot and deletes them by their policy, as in a cluster, while the
 * forwarder and the backend act as the csi-snapshotter sidecar. It runs as the ServiceAccount
 * `kube-system/snapshot-controller` under the roles of external-snapshotter's own
 * `rbac-snapshot-controller.yaml` (its ServiceAccount, ClusterRole and ClusterRoleBinding; the
 * leader-election Role is not needed, leader election is off), authenticated by a static token
 * of that ServiceAccount's user name.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeRest } from '../../forwarder/kube/rest.js';
import { createAll, type KubeManifest } from './cluster.js';
import { kubeconfigText } from './kubeconfig.js';
import { freePort, startProcess, type PlaneProcess } from './processes.js';

export interface SnapshotControllerOptions {
  /** The `snapshot-controller` binary (tools/ebs-csi, external-snapshotter). */
  binary: string;
  /** external-snapshotter's `deploy/kubernetes/snapshot-controller/rbac-snapshot-controller.yaml`, parsed. */
  rbac: readonly KubeManifest[];
}

export const SNAPSHOT_CONTROLLER_ACCOUNT = { namespace: 'kube-system', name: 'snapshot-controller' } as const;

/** The user the API server authenticates its token as: the ServiceAccount's name, and its groups. */
export const snapshotControllerUser = {
  name: `system:serviceaccount:${SNAPSHOT_CONTROLLER_ACCOUNT.namespace}:${SNAPSHOT_CONTROLLER_ACCOUNT.name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${SNAPSHOT_CONTROLLER_ACCOUNT.namespace}`],
};

const RBAC_KINDS = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'];

/** The objects of the RBAC file created here, in order; refuses a file without the ServiceAccount or its binding. */
export function snapshotControllerRbac(rbac: readonly KubeManifest[]): KubeManifest[] {
  const kept = rbac.filter((m) => RBAC_KINDS.includes(m.kind)).sort((a, b) => RBAC_KINDS.indexOf(a.kind) - RBAC_KINDS.indexOf(b.kind));
  const account = kept.find((m) => m.kind === 'ServiceAccount');
  if (account?.metadata.name !== SNAPSHOT_CONTROLLER_ACCOUNT.name || account.metadata.namespace !== SNAPSHOT_CONTROLLER_ACCOUNT.namespace) {
    throw new Error(`the snapshot-controller RBAC names no ServiceAccount ${SNAPSHOT_CONTROLLER_ACCOUNT.namespace}/${SNAPSHOT_CONTROLLER_ACCOUNT.name}`);
  }
  for (const kind of ['ClusterRole', 'ClusterRoleBinding']) {
    if (!kept.some((m) => m.kind === kind)) throw new Error(`the snapshot-controller RBAC has no ${kind}`);
  }
  return kept;
}

export async function startSnapshotController(options: SnapshotControllerOptions & { admin: KubeRest; url: string; caData: string; token: string; dir: string; host: string; timeoutMs?: number }): Promise<PlaneProcess> {
  await createAll(options.admin, snapshotControllerRbac(options.rbac));
  const kubeconfig = join(options.dir, 'snapshot-controller.kubeconfig');
  await writeFile(kubeconfig, kubeconfigText({ server: options.url, token: options.token, caData: options.caData, user: snapshotControllerUser.name }), { mode: 0o600 });
  const port = await freePort(options.host);
  const process = startProcess(
    'snapshot-controller',
    options.binary,
    [`--kubeconfig=${kubeconfig}`, '--leader-election=false', `--http-endpoint=${options.host}:${port}`, '--v=2'],
    join(options.dir, 'logs', 'snapshot-controller.log'),
  );
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (process.done()) throw new Error(`snapshot-controller exited (${await process.exited}); its log: ${process.log}`);
    const up = await fetch(`http://${options.host}:${port}/metrics`).then((r) => r.ok, () => false);
    if (up) return process;
    if (Date.now() > deadline) {
      await process.stop();
      throw new Error(`snapshot-controller not serving /metrics within ${(options.timeoutMs ?? 30_000) / 1000} s; its log: ${process.log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
