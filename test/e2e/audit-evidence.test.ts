/**
 * The audit destroys only on evidence it can date by the backend's own clock (issue 22), end
 * to end over the local stack and `npm run cluster -- audit local`. The forwarder here resyncs
 * once an hour, so a report goes out only when something sends it (the caches synced, a PV or
 * content added, a test asking for one): what an audit sees between two resyncs is what it
 * would see in a real cluster in the five minutes after a change.
 *
 * - the Kubernetes docs' way to re-use a Retain disk (the claim deleted, its Released PV
 *   deleted, a static PV made for the disk) never loses the disk to `audit --delete`, at once
 *   or later;
 * - a true orphan is deleted by the second `--delete` audit after a report, not the first;
 * - a forwarder whose clock is 200 s fast, silent afterwards, cannot make a live claim's disk
 *   "provably orphaned".
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Finalizers, ItemKeys, ReconcileResponseSchema, sign, TagKeys as Tags } from '../../lib/contract/index.js';
import { auditCli, clusterCli, freshReport } from './support/audit.js';
import { volumeById } from './support/ec2.js';
import { createClaim, createNamespace, createStorageClass, DRIVER, orMissing, readClaim, readVolume, ZONE_KEY } from './support/kube.js';
import { waitClaimBound, type ScenarioContext } from './support/scenarios.js';
import { startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;
let localDir: string;
let audit: ReturnType<typeof auditCli>;
const HOUR = 3_600_000;
const RETAIN_CLASS = 'gp3-retain-now';

beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), 'volhook-audit-evidence-'));
  ({ stack, ctx } = await startScenarioStack({ localDir, forwarder: { resyncSeconds: 3600 } }));
  audit = auditCli(clusterCli(localDir));
  await createStorageClass(stack.kube, {
    metadata: { name: RETAIN_CLASS },
    provisioner: DRIVER,
    parameters: { type: 'gp3' },
    reclaimPolicy: 'Retain',
    volumeBindingMode: 'Immediate',
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  if (localDir) await rm(localDir, { recursive: true, force: true });
});

const isDeleted = (volumeId: string) => async () => {
  const v = await volumeById(stack.ec2, volumeId);
  return v === undefined || v.State === 'deleting';
};

describe('audit --delete on evidence dated by the backend', () => {
  it('the Retain re-use flow: Retain claim deleted, its PV deleted, a static PV made for the disk -> audit --delete at once and again after a report keeps the disk', async () => {
    const ns = 'reuse';
    await createNamespace(stack.kube, ns);
    await createClaim(stack.kube, ns, 'keep', { storageClassName: RETAIN_CLASS, size: '4Gi' });
    const bound = await waitClaimBound(ctx, ns, 'keep');
    const pvName = bound.spec!.volumeName!;
    const pv = await readVolume(stack.kube, pvName);
    const volumeId = pv.spec!.csi!.volumeHandle;
    const made = (await volumeById(stack.ec2, volumeId))!;
    const zone = made.AvailabilityZone!;
    await freshReport(stack, Date.now());

    // The user's steps: delete the claim (the PV is Released, its disk kept), then the PV.
    await stack.kube.core.deleteNamespacedPersistentVolumeClaim({ namespace: ns, name: 'keep' });
    await waitFor(() => readVolume(stack.kube, pvName), (v) => v.status?.phase === 'Released' && !(v.metadata?.finalizers ?? []).includes(Finalizers.provisioner), {
      what: `PV ${pvName} Released, volhook's finalizer dropped`,
    });
    await waitFor(() => orMissing(readClaim(stack.kube, ns, 'keep')), (c) => c === undefined, { what: 'claim keep gone' });
    await stack.kube.core.deletePersistentVolume({ name: pvName });
    await waitFor(() => orMissing(readVolume(stack.kube, pvName)), (v) => v === undefined, { what: `PV ${pvName} gone` });
    // Its next report (at the latest a resync later) no longer names the disk — nor its claim,
    // and it postdates the disk (as an hourly audit meets it: the disk is older than any report).
    await freshReport(stack, Math.max(Date.now(), made.CreateTime!.getTime() + 6_000));

    // Then a static PV for the disk, and at once an audit that deletes.
    await stack.kube.core.createPersistentVolume({
      body: {
        metadata: { name: 'reused' },
        spec: {
          capacity: { storage: '4Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: '',
          csi: { driver: DRIVER, volumeHandle: volumeId, fsType: 'ext4' },
          nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE_KEY, operator: 'In', values: [zone] }] }] } },
        },
      },
    });
    const atOnce = await audit('--delete', '--grace', '0s');
    expect(atOnce.deletions.filter((d) => d.volumeId === volumeId && d.outcome === 'deleted')).toEqual([]);
    expect((await volumeById(stack.ec2, volumeId))?.State).toBe('available');

    // The PV sent a report of its own (not waiting for the hourly resync): it names the disk.
    await waitFor(() => stack.reports.get(stack.clusterId), (r) => r?.report.volumes.some((v) => v.pv === 'reused' && v.volumeId === volumeId) === true, {
      what: 'a report naming the static PV, sent when it was added',
      timeoutMs: 30_000,
    });
    await freshReport(stack, Date.now());
    const later = await audit('--delete', '--grace', '0s');
    expect(later.orphans.map((o) => o.volumeId)).not.toContain(volumeId);
    expect(later.deletions.filter((d) => d.volumeId === volumeId)).toEqual([]);
    expect((await volumeById(stack.ec2, volumeId))?.State).toBe('available');

    // The static PV deleted too: the disk is the user's still (its last PV said Retain) — reported, kept.
    await stack.kube.core.deletePersistentVolume({ name: 'reused' });
    await waitFor(() => orMissing(readVolume(stack.kube, 'reused')), (v) => v === undefined, { what: 'PV reused gone' });
    await freshReport(stack, Date.now());
    for (let i = 0; i < 2; i++) {
      const result = await audit('--delete', '--grace', '0s');
      expect(result.orphans.find((o) => o.volumeId === volumeId)).toMatchObject({ deletable: false, retained: true });
      expect(result.deletions.filter((d) => d.volumeId === volumeId)).toEqual([]);
      await freshReport(stack, Date.now());
    }
    expect((await volumeById(stack.ec2, volumeId))?.State).toBe('available');
    // Named by the operator, it goes (marked by the audits above, a report received since).
    const named = await audit('--delete', '--grace', '0s', '--volume', volumeId);
    expect(named.deletions).toEqual([{ volumeId, outcome: 'deleted' }]);
    await waitFor(isDeleted(volumeId), Boolean, { what: `${volumeId} deleted` });
  }, 240_000);

  it('a true orphan -> marked by the first --delete audit, kept by another before a new report, deleted by the one after it', async () => {
    const [orphan] = stack.simulator!.seedVolumes({
      zone: stack.nodes[0]!.zone,
      sizeGiB: 3,
      createdAt: new Date(Date.now() - 2 * HOUR).toISOString(),
      tags: { [Tags.csiVolumeName]: `pvc-${randomUUID()}`, [Tags.ebsCluster]: 'true', [Tags.cluster(stack.clusterId)]: 'owned', [Tags.volhookCluster]: stack.clusterId },
    });
    await freshReport(stack, Date.now());
    const first = await audit('--delete');
    expect(first.deletions).toEqual([{ volumeId: orphan!.id, outcome: 'marked', markedAt: expect.any(String), why: expect.stringContaining('a report received after that') }]);
    const again = await audit('--delete');
    expect(again.deletions).toMatchObject([{ volumeId: orphan!.id, outcome: 'marked', markedAt: first.deletions[0]!.outcome === 'marked' ? first.deletions[0]!.markedAt : '' }]);
    expect((await volumeById(stack.ec2, orphan!.id))?.State).toBe('available');

    await freshReport(stack, Date.now());
    const second = await audit('--delete');
    expect(second.deletions).toEqual([{ volumeId: orphan!.id, outcome: 'deleted' }]);
    await waitFor(isDeleted(orphan!.id), Boolean, { what: `orphan ${orphan!.id} deleted` });
  }, 120_000);

  it('a forwarder clock 200 s fast reports, then stops; a claim made after its report arrived gets its disk -> unknown, kept by every audit', async () => {
    const reported = await stack.reports.get(stack.clusterId);
    expect(reported).toBeDefined();
    await stack.forwarder()?.stop();
    // The forwarder's last resync, by a clock 200 s ahead (inside the 300 s the signature allows).
    const ahead = Date.now() + 200_000;
    const body = JSON.stringify({ clusterId: stack.clusterId, items: [{ kind: 'VolumeReport', digest: reported!.digest, observedAt: ahead }] });
    const response = await fetch(`${stack.urls.backend}/v1/clusters/${stack.clusterId}/reconcile`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...sign(body, stack.secret, { now: Math.floor(ahead / 1000) }) },
      body,
    });
    expect(response.status).toBe(200);
    expect(ReconcileResponseSchema.parse(await response.json()).results).toMatchObject([{ key: ItemKeys.report(), outcome: 'done' }]);
    const confirmed = (await stack.reports.get(stack.clusterId))!;
    expect(confirmed.observedAt).toBeGreaterThan(Date.now() + 150_000);

    // A claim made after that report arrived; volhook made its disk (here seeded as the backend makes it).
    await sleep(Math.max(0, confirmed.receivedAt + 6_000 - Date.now()));
    await createNamespace(stack.kube, 'late');
    const claim = await createClaim(stack.kube, 'late', 'live', { storageClassName: RETAIN_CLASS, size: '2Gi' });
    const [disk] = stack.simulator!.seedVolumes({
      zone: stack.nodes[0]!.zone,
      sizeGiB: 2,
      createdAt: new Date().toISOString(),
      tags: {
        [Tags.csiVolumeName]: `pvc-${claim.metadata!.uid}`,
        [Tags.ebsCluster]: 'true',
        [Tags.cluster(stack.clusterId)]: 'owned',
        [Tags.volhookCluster]: stack.clusterId,
        [Tags.pvcNamespace]: 'late',
        [Tags.pvcName]: 'live',
      },
    });
    for (let i = 0; i < 2; i++) {
      const result = await audit('--delete', '--grace', '0s');
      expect(result.deletions.filter((d) => d.volumeId === disk!.id)).toEqual([]);
      expect(result.orphans.map((o) => o.volumeId)).not.toContain(disk!.id);
      expect(result.unknown.map((u) => u.volumeId)).toContain(disk!.id);
    }
    expect((await volumeById(stack.ec2, disk!.id))?.State).toBe('available');
    await stack.restartForwarder();
  }, 120_000);
});
