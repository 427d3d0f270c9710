/**
 * What both hand-overs (handover-in.test.ts, handover-out.test.ts) share: the cluster's API as
 * its administrator, claims with pods, `npm run cluster` run as an operator runs it, and the
 * verdict on the simulator's state at the end (leftBehind).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi, KubeConfig, StorageV1Api, type V1PersistentVolumeClaim, type V1Pod } from '@kubernetes/client-node';
import type { Ec2Simulator } from '../../lib/local/ec2/index.js';
import type { Ec2SimStats } from '../../lib/local/ec2/index.js';
import type { RealLocalStack } from '../../lib/local/stack/index.js';
import { expect } from 'vitest';
import { waitFor } from '../e2e/support/wait.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const NS = 'handover';

export interface Kube {
  core: CoreV1Api;
  storage: StorageV1Api;
  custom: CustomObjectsApi;
}

export function kubeOf(stack: RealLocalStack): Kube {
  const kc = new KubeConfig();
  kc.loadFromString(stack.kubeconfig);
  return { core: kc.makeApiClient(CoreV1Api), storage: kc.makeApiClient(StorageV1Api), custom: kc.makeApiClient(CustomObjectsApi) };
}

export const isRunning = (pod: V1Pod | undefined) => pod?.status?.phase === 'Running' && (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export function pod(name: string, claimName: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: 'handover' } },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', 'infinity'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  };
}

/** The namespace, once its default ServiceAccount exists (pods are refused before). */
export async function createNamespace(kube: Kube): Promise<void> {
  await kube.core.createNamespace({ body: { metadata: { name: NS } } });
  await waitFor(() => kube.core.readNamespacedServiceAccount({ name: 'default', namespace: NS }), () => true, { what: `the default ServiceAccount of ${NS}` });
}

/** WaitForFirstConsumer claims of the plane's default class `gp3`, each with a pod: Bound, attached, Running. */
export async function claimsWithPods(kube: Kube, names: readonly string[]): Promise<{ claims: V1PersistentVolumeClaim[]; volumeIds: string[] }> {
  for (const name of names) {
    await kube.core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'gp3', resources: { requests: { storage: '4Gi' } } } },
    });
    await kube.core.createNamespacedPod({ namespace: NS, body: pod(`user-${name}`, name) });
  }
  const claims = await waitFor(
    () => Promise.all(names.map((name) => kube.core.readNamespacedPersistentVolumeClaim({ name, namespace: NS }))),
    (list) => list.every((c) => c.status?.phase === 'Bound'),
    { what: `${names.join(', ')} Bound`, timeoutMs: 180_000, report: (list) => list?.map((c) => [c.metadata?.name, c.status?.phase]) },
  );
  for (const name of names) await podRunning(kube, `user-${name}`);
  return { claims, volumeIds: await Promise.all(claims.map((c) => volumeIdOf(kube, c))) };
}

export async function volumeIdOf(kube: Kube, claim: V1PersistentVolumeClaim): Promise<string> {
  const pv = await kube.core.readPersistentVolume({ name: claim.spec!.volumeName! });
  const id = pv.spec?.csi?.volumeHandle;
  if (!id) throw new Error(`PV ${pv.metadata?.name} names no CSI volume`);
  return id;
}

export async function podRunning(kube: Kube, name: string): Promise<V1Pod> {
  return waitFor(() => kube.core.readNamespacedPod({ name, namespace: NS }), isRunning, {
    what: `pod ${name} Running`,
    timeoutMs: 180_000,
    report: (p) => [p?.status?.phase, p?.spec?.nodeName, p?.status?.conditions?.map((c) => `${c.type}=${c.status}`)],
  });
}

export async function deletePod(kube: Kube, name: string): Promise<void> {
  await kube.core.deleteNamespacedPod({ name, namespace: NS });
  await waitFor(
    () => kube.core.listNamespacedPod({ namespace: NS, fieldSelector: `metadata.name=${name}` }),
    (list) => list.items.length === 0,
    { what: `pod ${name} gone`, timeoutMs: 120_000 },
  );
}

/** Waits for the disk in `state`; `deleted` is also a disk EC2 no longer lists. */
export async function diskState(sim: Ec2Simulator, volumeId: string, state: 'available' | 'in-use' | 'deleted', what: string): Promise<void> {
  await waitFor(
    () => sim.volume(volumeId) ?? null,
    (v) => (v === null ? state === 'deleted' : v.state === state),
    { what, timeoutMs: 180_000, report: (v) => [v?.state, v?.attachments.map((a) => [a.instanceId, a.state])] },
  );
}

/** Claims grown to `size`: the disk, the PV and the claim's status, as kubelet finishes it (the node agents). */
export async function grow(kube: Kube, sim: Ec2Simulator, name: string, volumeId: string, sizeGiB: number): Promise<void> {
  await kube.core.patchNamespacedPersistentVolumeClaim({ name, namespace: NS, body: [{ op: 'replace', path: '/spec/resources/requests/storage', value: `${sizeGiB}Gi` }] });
  await waitFor(
    () => kube.core.readNamespacedPersistentVolumeClaim({ name, namespace: NS }),
    (c) => c.status?.capacity?.storage === `${sizeGiB}Gi` && (c.status.conditions ?? []).length === 0,
    { what: `${name} at ${sizeGiB}Gi with no resize condition left`, timeoutMs: 180_000, report: (c) => c?.status },
  );
  expect(sim.volume(volumeId)?.size).toBe(sizeGiB);
}

/** Every Warning Event of the claims' namespace and of cluster-scoped objects (PVs, VolumeAttachments), as `kind/name reason: message`. */
/**
 * `claimName`'s pod deleted, its disk seen detached and its VolumeAttachment gone; a new pod
 * `newPod` on it, Running, its disk attached again: one DetachVolume and one AttachVolume, done by
 * the side `by` names.
 */
export async function detachAndReattach(kube: Kube, sim: Ec2Simulator, oldPod: string, newPod: string, claimName: string, volumeId: string, by: string): Promise<void> {
  const before = sim.getStats();
  await deletePod(kube, oldPod);
  await diskState(sim, volumeId, 'available', `${claimName} detached by ${by}`);
  await waitFor(() => attachments(kube), (list) => list.length === 1, { what: `${claimName}'s VolumeAttachment gone`, timeoutMs: 120_000 });
  await kube.core.createNamespacedPod({ namespace: NS, body: pod(newPod, claimName) });
  await podRunning(kube, newPod);
  await diskState(sim, volumeId, 'in-use', `${claimName} attached by ${by}`);
  expect(okSince(before, sim.getStats(), ['DetachVolume', 'AttachVolume'])).toEqual({ DetachVolume: 1, AttachVolume: 1 });
}

export async function warnings(kube: Kube): Promise<string[]> {
  const events = [...(await kube.core.listNamespacedEvent({ namespace: NS })).items, ...(await kube.core.listNamespacedEvent({ namespace: 'default' })).items];
  return events.filter((e) => e.type === 'Warning').map((e) => `${e.involvedObject.kind}/${e.involvedObject.name} ${e.reason}: ${e.message}`);
}

/** Every VolumeAttachment, as `persistentVolumeName attached`. */
export async function attachments(kube: Kube): Promise<string[]> {
  return (await kube.storage.listVolumeAttachment()).items.map((va) => `${va.spec.source.persistentVolumeName} ${va.status?.attached === true}`).sort();
}

/** What a command printed and how it ended. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run cluster -- <args>`, as an operator runs it (bin/cluster.ts), in the repository. */
export async function cluster(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/cluster.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Calls that succeeded of each action between two readings of the simulator's counters. */
export function okSince(before: Ec2SimStats, after: Ec2SimStats, actions: readonly string[]): Record<string, number> {
  return Object.fromEntries(actions.map((a) => [a, (after.actions[a]?.ok ?? 0) - (before.actions[a]?.ok ?? 0)]));
}

/** The mutations a hand-over must not make by itself. */
export const MUTATIONS = ['CreateVolume', 'AttachVolume', 'DetachVolume', 'ModifyVolume', 'DeleteVolume', 'CreateSnapshot', 'DeleteSnapshot'] as const;

/**
 * The simulator's state at the end, judged: what is left of the volumes made since `rootVolumes`
 * (none but deleted ones), of snapshots (none), the nodes' root volumes as they
 * were, and the calls EC2 refused (UnauthorizedOperation, AuthFailure). Empty when nothing leaked.
 */
export function leftBehind(sim: Ec2Simulator, rootVolumes: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const v of sim.volumes()) {
    if (rootVolumes.has(v.id)) {
      if (v.state !== 'in-use' || v.attachments.length !== 1) problems.push(`root volume ${v.id} ${v.state} with ${v.attachments.length} attachment(s)`);
    } else if (v.state !== 'deleted') {
      problems.push(`volume ${v.id} left ${v.state} (${v.attachments.map((a) => `${a.instanceId} ${a.state}`).join(', ') || 'not attached'})`);
    }
  }
  // A deleted snapshot is gone from EC2 at once.
  for (const s of sim.snapshots()) problems.push(`snapshot ${s.id} of ${s.volumeId} left ${s.state}`);
  const errors = sim.getStats().total.errors;
  for (const code of ['UnauthorizedOperation', 'AuthFailure']) if (errors[code]) problems.push(`${errors[code]} call(s) refused ${code}`);
  return problems;
}
