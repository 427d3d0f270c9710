/**
 * Scenarios shared by the simulator and the moto suites: each drives Kubernetes over HTTP,
 * waits for convergence and checks both sides (the Kubernetes objects and EC2).
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { Result } from '../../../lib/contract/index.js';
import type { LocalNode } from '../../../lib/local/stack/index.js';
import { provisionedVolumes, tagsOf, TagKeys, volumeById, volumesState } from './ec2.js';
import {
  attachmentsOf,
  claimState,
  createClaim,
  createNamespace,
  createPod,
  DRIVER,
  listClaims,
  listVolumes,
  orMissing,
  readClaim,
  readPod,
  readVolume,
  volumeZones,
  type E2eKube,
} from './kube.js';
import { show, waitFor } from './wait.js';

export interface ScenarioContext {
  kube: E2eKube;
  ec2: EC2Client;
  clusterId: string;
  nodes: LocalNode[];
  /** Every result the backend produced, in order (the stack's `onResult`). */
  results: Result[];
}

/** Collects the backend's results for a {@link ScenarioContext}. */
export function resultLog(): { results: Result[]; onResult(clusterId: string, item: unknown, result: Result): void } {
  const results: Result[] = [];
  return { results, onResult: (_c, _i, result) => void results.push(result) };
}

export interface ProvisionedForPod {
  pvName: string;
  volumeId: string;
  zone: string;
  nodeName: string;
}

export async function waitClaimBound(ctx: ScenarioContext, namespace: string, name: string, timeoutMs = 90_000) {
  return waitFor(
    () => readClaim(ctx.kube, namespace, name),
    (pvc) => pvc.status?.phase === 'Bound' && Boolean(pvc.spec?.volumeName),
    { what: `PVC ${namespace}/${name} Bound`, timeoutMs },
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\nclaim state: ${show(claimState(await orMissing(readClaim(ctx.kube, namespace, name))))}`);
  });
}

export async function waitPodRunning(ctx: ScenarioContext, namespace: string, name: string, timeoutMs = 90_000) {
  return waitFor(
    () => readPod(ctx.kube, namespace, name),
    (p) => p.status?.phase === 'Running',
    { what: `pod ${namespace}/${name} Running`, timeoutMs },
  );
}

/**
 * Scenario 1: a WaitForFirstConsumer claim and a pod. The disk is made in the zone of the
 * node the scheduler picked, tagged as DESIGN.md says, attached there, and the pod runs.
 */
export async function provisionForPod(ctx: ScenarioContext, namespace: string, storageClassName = 'gp3'): Promise<ProvisionedForPod> {
  await createNamespace(ctx.kube, namespace);
  await createClaim(ctx.kube, namespace, 'data', { storageClassName, size: '5Gi' });
  await createPod(ctx.kube, namespace, 'user', ['data']);

  const pvc = await waitClaimBound(ctx, namespace, 'data');
  const running = await waitPodRunning(ctx, namespace, 'user');

  const nodeName = running.spec?.nodeName ?? '';
  const node = ctx.nodes.find((n) => n.name === nodeName);
  expect(node, `the pod's node ${nodeName} is one of the stack's nodes`).toBeDefined();
  const zone = node!.zone;

  const uid = pvc.metadata?.uid ?? '';
  const pvName = `pvc-${uid}`;
  expect(pvc.spec?.volumeName).toBe(pvName);
  expect(pvc.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBe(nodeName);

  const pv = await readVolume(ctx.kube, pvName);
  expect(pv.status?.phase).toBe('Bound');
  expect(pv.spec?.claimRef).toMatchObject({ namespace, name: 'data', uid });
  expect(pv.spec?.csi?.driver).toBe(DRIVER);
  expect(pv.spec?.persistentVolumeReclaimPolicy).toBe('Delete');
  expect(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe(DRIVER);
  expect(volumeZones(pv)).toEqual([zone]);
  const volumeId = pv.spec?.csi?.volumeHandle ?? '';
  expect(volumeId).toMatch(/^vol-/);

  const volume = await waitFor(
    () => volumeById(ctx.ec2, volumeId),
    (v) => v?.State === 'in-use',
    { what: `EC2 volume ${volumeId} in-use` },
  );
  expect(volume?.AvailabilityZone).toBe(zone);
  expect(volume?.Size).toBe(5);
  expect(tagsOf(volume)).toMatchObject({
    [TagKeys.csiVolumeName]: pvName,
    [TagKeys.ebsCluster]: 'true',
    [TagKeys.owner(ctx.clusterId)]: 'owned',
    [TagKeys.volhookCluster]: ctx.clusterId,
    [TagKeys.pvcName]: 'data',
    [TagKeys.pvcNamespace]: namespace,
    [TagKeys.pvName]: pvName,
  });
  expect(volume?.Attachments?.map((a) => a.InstanceId)).toEqual([node!.instanceId]);

  const [va, ...more] = await attachmentsOf(ctx.kube, pvName);
  expect(more).toEqual([]);
  expect(va?.spec.attacher).toBe(DRIVER);
  expect(va?.spec.nodeName).toBe(nodeName);
  expect(va?.status?.attached).toBe(true);
  expect(va?.status?.attachmentMetadata?.devicePath).toMatch(/^\/dev\/\w+/);
  expect(volume?.Attachments?.[0]?.Device).toBe(va?.status?.attachmentMetadata?.devicePath);

  return { pvName, volumeId, zone, nodeName };
}

/** Waits until the backend has reconciled `key` to `done` at least `after` results into the log. */
async function waitReconciledDone(ctx: ScenarioContext, key: string, after: number): Promise<void> {
  await waitFor(
    () => ctx.results.slice(after).filter((r) => r.key === key),
    (rs) => rs.some((r) => r.outcome === 'done'),
    { what: `a "done" result for ${key}` },
  );
}

/**
 * Scenario 4: reclaim policies. Delete: deleting the pod detaches (the VolumeAttachment goes,
 * the disk is `available`), deleting the claim deletes the disk and the PV. Retain: the disk
 * and the Released PV stay.
 */
export async function reclaimPolicies(ctx: ScenarioContext, namespace: string): Promise<void> {
  await createNamespace(ctx.kube, namespace);
  // One after the other: moto accepts a device name already in use on an instance, so two
  // attaches to one node racing in separate requests could both get /dev/xvdaa there.
  for (const [name, storageClassName] of [['deleted', 'gp3'], ['kept', 'gp3-retain']] as const) {
    await createClaim(ctx.kube, namespace, name, { storageClassName });
    await createPod(ctx.kube, namespace, `user-${name}`, [name]);
    await waitPodRunning(ctx, namespace, `user-${name}`);
  }

  const bound = async (name: string) => {
    const pvName = (await readClaim(ctx.kube, namespace, name)).spec?.volumeName ?? '';
    const pv = await readVolume(ctx.kube, pvName);
    return { pvName, volumeId: pv.spec?.csi?.volumeHandle ?? '', policy: pv.spec?.persistentVolumeReclaimPolicy };
  };
  const deleted = await bound('deleted');
  const kept = await bound('kept');
  expect(deleted.policy).toBe('Delete');
  expect(kept.policy).toBe('Retain');
  for (const { volumeId } of [deleted, kept]) {
    await waitFor(() => volumeById(ctx.ec2, volumeId), (v) => v?.State === 'in-use', { what: `${volumeId} in-use` });
  }

  // Pods go: both disks are detached.
  await ctx.kube.core.deleteNamespacedPod({ namespace, name: 'user-deleted' });
  await ctx.kube.core.deleteNamespacedPod({ namespace, name: 'user-kept' });
  for (const { pvName, volumeId } of [deleted, kept]) {
    await waitFor(() => attachmentsOf(ctx.kube, pvName), (vas) => vas.length === 0, { what: `no VolumeAttachment for ${pvName}` });
    await waitFor(
      () => volumeById(ctx.ec2, volumeId),
      (v) => v?.State === 'available' && (v.Attachments ?? []).length === 0,
      { what: `${volumeId} detached (available)` },
    );
  }

  // Claims go: Delete deletes the disk and the PV; Retain keeps both, the PV Released.
  const mark = ctx.results.length;
  await ctx.kube.core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'deleted' });
  await ctx.kube.core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'kept' });
  await waitFor(() => orMissing(readVolume(ctx.kube, deleted.pvName)), (pv) => pv === undefined, { what: `PV ${deleted.pvName} deleted` });
  await waitFor(() => volumeById(ctx.ec2, deleted.volumeId), (v) => v === undefined, { what: `EC2 volume ${deleted.volumeId} deleted` });

  await waitFor(() => readVolume(ctx.kube, kept.pvName), (pv) => pv.status?.phase === 'Released', { what: `PV ${kept.pvName} Released` });
  await waitReconciledDone(ctx, `PersistentVolume/${kept.pvName}`, mark);
  // Give the forwarder a resync or two to do anything it would do wrongly.
  await sleep(2_500);
  const keptPv = await readVolume(ctx.kube, kept.pvName);
  expect(keptPv.status?.phase).toBe('Released');
  expect(keptPv.metadata?.deletionTimestamp).toBeUndefined();
  expect(keptPv.metadata?.finalizers ?? []).not.toContain('external-provisioner.volume.kubernetes.io/finalizer');
  const keptVolume = await volumeById(ctx.ec2, kept.volumeId);
  expect(keptVolume?.State).toBe('available');
  expect(tagsOf(keptVolume)[TagKeys.pvName]).toBe(kept.pvName);
}

/** `{ Bound: 48, Pending: 2 }`, for failure messages about many claims. */
export function phaseCounts(pvcs: V1PersistentVolumeClaim[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const p of pvcs) counts[p.status?.phase ?? 'none'] = (counts[p.status?.phase ?? 'none'] ?? 0) + 1;
  return counts;
}

/**
 * Scenario 6: `count` claims at once on an Immediate class; all Bound, exactly one disk each
 * and no other disk for the namespace.
 */
export async function manyClaims(
  ctx: ScenarioContext,
  namespace: string,
  storageClassName: string,
  count = 50,
  /** Runs once the claims are created, while they are provisioning (e.g. a forwarder restart). */
  midway?: () => Promise<void>,
): Promise<void> {
  await createNamespace(ctx.kube, namespace);
  const names = Array.from({ length: count }, (_, i) => `claim-${String(i).padStart(2, '0')}`);
  await Promise.all(names.map((name) => createClaim(ctx.kube, namespace, name, { storageClassName, size: '4Gi' })));
  await midway?.();

  const claims = await waitFor(
    () => listClaims(ctx.kube, namespace),
    (pvcs) => pvcs.length === count && pvcs.every((p) => p.status?.phase === 'Bound'),
    { what: `${count} PVCs in ${namespace} Bound`, timeoutMs: 120_000, report: phaseCounts },
  );

  const ours = (await provisionedVolumes(ctx.ec2, ctx.clusterId)).filter((v) => tagsOf(v)[TagKeys.pvcNamespace] === namespace);
  expect(ours.length, show(volumesState(ours))).toBe(count);
  const byPv = new Map(ours.map((v) => [tagsOf(v)[TagKeys.pvName], v]));
  expect(byPv.size).toBe(count);

  const volumes = new Map((await listVolumes(ctx.kube)).map((pv) => [pv.metadata?.name, pv]));
  for (const pvc of claims) {
    const pvName = pvc.spec?.volumeName ?? '';
    expect(pvName).toBe(`pvc-${pvc.metadata?.uid}`);
    const pv = volumes.get(pvName);
    const volume = byPv.get(pvName);
    expect(volume, `EC2 volume for ${pvName}`).toBeDefined();
    expect(pv?.spec?.csi?.volumeHandle).toBe(volume?.VolumeId);
    expect(tagsOf(volume)[TagKeys.pvcName]).toBe(pvc.metadata?.name);
    expect(volumeZones(pv!)).toEqual([volume?.AvailabilityZone]);
  }
}
