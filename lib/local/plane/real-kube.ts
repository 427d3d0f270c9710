/**
 * The local stack's Kubernetes when it is the real one (VOLHOOK_KUBE=real): the control plane
 * (control-plane.ts), one node agent per simulated instance (node-agent.ts), the objects the
 * simulated API is seeded with, the VolumeSnapshot CRDs, and the forwarder's identity from the
 * chart with its ServiceAccount's volume (token-volume.ts). What the stack needs of it: the
 * URL, a kubeconfig for people and tests (the administrator), and that volume, which the
 * forwarder reads as it does in a pod.
 */
import { join } from 'node:path';
import type { Logger } from '../../forwarder/logger.js';
import type { LocalNode } from '../stack/cluster-objects.js';
import { createForwarderIdentity, createStorageObjects, installSnapshotCrds, untaintReadyNode, type ForwarderIdentity, type KubeManifest } from './cluster.js';
import { startControlPlane, type ControlPlane, type ControlPlaneBinaries } from './control-plane.js';
import { startNodeAgent, type NodeAgent } from './node-agent.js';
import type { PlaneProcess } from './processes.js';
import { snapshotControllerUser, startSnapshotController, type SnapshotControllerOptions } from './snapshot-controller.js';
import { startTokenVolume, type TokenVolume } from './token-volume.js';

export interface RealKubeOptions {
  binaries: ControlPlaneBinaries;
  /** external-snapshotter's `config/crd/` (from the Go module cache). */
  snapshotCrdDir: string;
  /** The forwarder chart's render (`helm template`): its ServiceAccount and roles are created. */
  forwarderChart: readonly KubeManifest[];
  /** Data, certificates and logs of the plane's processes. */
  dir: string;
  /** The API server's port; a free one by default. */
  port?: number;
  /** The node agents' and the token volume's warnings. */
  logger?: Logger;
  /** Also run external-snapshotter's snapshot-controller (snapshot-controller.ts); not run by default. */
  snapshotController?: SnapshotControllerOptions;
}

export interface RealKube {
  url: string;
  caData: string;
  plane: ControlPlane;
  /** The forwarder's ServiceAccount, and the volume kubelet would mount in its pod (token, ca.crt, namespace). */
  forwarder: ForwarderIdentity & { volume: TokenVolume };
  agents: readonly NodeAgent[];
  /** The snapshot-controller's process, when it was asked for. */
  snapshotController?: PlaneProcess;
  stop(): Promise<void>;
}

export const nodeUser = (name: string) => ({ name: `system:node:${name}`, groups: ['system:nodes'] });

export async function startRealKube(options: RealKubeOptions & { host: string; nodes: readonly LocalNode[]; region: string }): Promise<RealKube> {
  const plane = await startControlPlane({
    binaries: options.binaries,
    dir: options.dir,
    host: options.host,
    ...(options.port ? { apiserverPort: options.port } : {}),
    users: [...options.nodes.map((n) => nodeUser(n.name)), ...(options.snapshotController ? [snapshotControllerUser] : [])],
  });
  const agents: NodeAgent[] = [];
  let volume: TokenVolume | undefined;
  let snapshotController: PlaneProcess | undefined;
  const stop = async () => {
    await snapshotController?.stop();
    volume?.stop();
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    await plane.stop();
  };
  try {
    const admin = plane.rest();
    await createStorageObjects(admin);
    await installSnapshotCrds(admin, options.snapshotCrdDir);
    if (options.snapshotController) {
      snapshotController = await startSnapshotController({
        ...options.snapshotController,
        admin,
        url: plane.url,
        caData: plane.caData,
        token: plane.tokens.get(snapshotControllerUser.name)!,
        dir: options.dir,
        host: options.host,
      });
    }
    const identity = await createForwarderIdentity(admin, options.forwarderChart);
    volume = await startTokenVolume({
      rest: admin,
      namespace: identity.namespace,
      serviceAccount: identity.serviceAccount,
      caPem: Buffer.from(plane.caData, 'base64').toString('utf8'),
      dir: join(options.dir, 'forwarder-serviceaccount'),
      onError: (err) => options.logger?.warn("the forwarder's token could not be renewed", { err: err instanceof Error ? err.message : String(err) }),
    });
    for (const node of options.nodes) {
      const token = plane.tokens.get(nodeUser(node.name).name)!;
      agents.push(await startNodeAgent({ rest: plane.rest(token), node, region: options.region, ...(options.logger ? { logger: options.logger } : {}) }));
    }
    await Promise.all(options.nodes.map((node) => untaintReadyNode(admin, node.name)));
    return { url: plane.url, caData: plane.caData, plane, forwarder: { ...identity, volume }, agents, ...(snapshotController && { snapshotController }), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
