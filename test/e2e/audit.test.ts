/**
 * The audit over the local stack, end to end: the forwarder reports, the backend keeps the
 * report in the stack's local directory, and `npm run cluster -- audit local` (run in-process
 * through the CLI's own entry) finds the running stack there with no flags, judges the
 * simulator's disks and snapshots, marks the provable orphans and deletes them in a later audit
 * after a new report, and leaves Warning Events for a lost disk and a lost snapshot.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AttachVolumeCommand, DeleteSnapshotCommand, DeleteVolumeCommand, DescribeSnapshotsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Finalizers, SNAPSHOT_API_GROUP, TagKeys as Tags } from '../../lib/contract/index.js';
import { auditCli, clusterCli, freshReport as reportAfter, type ClusterCli } from './support/audit.js';
import { provisionedVolumes, volumeById } from './support/ec2.js';
import { createClaim, createNamespace, eventsFor, readClaim, readVolume } from './support/kube.js';
import { waitClaimBound, type ScenarioContext } from './support/scenarios.js';
import { kubeConfigOf, STACK_START_MS } from './support/plane.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;
let localDir: string;
let cluster: ClusterCli;
let audit: ReturnType<typeof auditCli>;
const HOUR = 3_600_000;

beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), 'volhook-audit-'));
  ({ stack, ctx } = await startScenarioStack({ immediateClass: true, localDir }));
  cluster = clusterCli(localDir);
  audit = auditCli(cluster);
}, STACK_START_MS);
afterAll(async () => {
  await stack?.stop();
  if (localDir) await rm(localDir, { recursive: true, force: true });
});

const freshReport = (after: number) => reportAfter(stack, after);

function orphanTags(uid = randomUUID()): Record<string, string> {
  return {
    [Tags.csiVolumeName]: `pvc-${uid}`,
    [Tags.ebsCluster]: 'true',
    [Tags.cluster(stack.clusterId)]: 'owned',
    [Tags.volhookCluster]: stack.clusterId,
    [Tags.pvcNamespace]: 'gone',
    [Tags.pvcName]: `claim-${uid.slice(0, 8)}`,
  };
}

describe('cluster audit over the local stack', () => {
  it('3 orphans (1 young), 1 disk lost behind volhook, 1 attached with no VolumeAttachment, 20 healthy claims -> 2 orphans (marked by that audit), 1 lost, 1 drift; after a report, --delete deletes exactly the 2; again -> no orphan', async () => {
    const sim = stack.simulator!;
    const ns = 'fleet';
    await createNamespace(stack.kube, ns);
    const names = Array.from({ length: 21 }, (_, i) => `healthy-${i}`);
    for (const name of names) await createClaim(stack.kube, ns, name, { storageClassName: IMMEDIATE_CLASS });
    for (const name of names) await waitClaimBound(ctx, ns, name);

    // One PV whose disk is deleted behind volhook's back (the claim has no pod: the disk is available).
    const lostClaim = await readClaim(stack.kube, ns, 'healthy-20');
    const lostPv = await readVolume(stack.kube, lostClaim.spec!.volumeName!);
    const lostVolumeId = lostPv.spec!.csi!.volumeHandle;
    await stack.ec2.send(new DeleteVolumeCommand({ VolumeId: lostVolumeId }));

    const zone = stack.nodes[0]!.zone;
    const old = new Date(Date.now() - 2 * HOUR).toISOString();
    const [orphanA] = sim.seedVolumes({ zone, sizeGiB: 10, tags: orphanTags(), createdAt: old });
    const [orphanB] = sim.seedVolumes({ zone, sizeGiB: 20, type: 'gp2', tags: orphanTags(), createdAt: old });
    const [young] = sim.seedVolumes({ zone, sizeGiB: 5, tags: orphanTags(), createdAt: new Date(Date.now() - 5 * 60_000).toISOString() });
    const [drifted] = sim.seedVolumes({ zone, sizeGiB: 8, tags: orphanTags(), createdAt: old });
    await stack.ec2.send(new AttachVolumeCommand({ VolumeId: drifted!.id, InstanceId: stack.nodes[0]!.instanceId, Device: '/dev/xvdz' }));
    await waitFor(() => volumeById(stack.ec2, drifted!.id), (v) => v?.Attachments?.[0]?.State === 'attached', { what: 'the drifted disk attached' });
    await freshReport(Date.now() + 1000);

    const first = await audit();
    expect(first.orphans.map((o) => o.volumeId).sort()).toEqual([orphanA!.id, orphanB!.id].sort());
    expect(first.orphans.every((o) => o.deletable)).toBe(true);
    expect(first.orphans.map((o) => o.volumeId)).not.toContain(young!.id);
    expect(first.totals).toMatchObject({ orphanedVolumes: 2, orphanedGiB: 30, orphanedMonthlyUsd: 0.8 + 2 });
    expect(first.lost).toMatchObject([{ volumeId: lostVolumeId, pv: lostPv.metadata!.name, claim: { namespace: ns, name: 'healthy-20' } }]);
    expect(first.drift).toMatchObject([{ volumeId: drifted!.id, direction: 'attached-without-volumeattachment', instanceId: stack.nodes[0]!.instanceId }]);
    expect(first.deletions).toEqual([]);

    // The lost disk's Warning Events reach the PV and the claim with the answer to the next report.
    await freshReport(Date.now());
    await waitFor(() => eventsFor(stack.kube, ns, 'PersistentVolumeClaim', 'healthy-20'), (es) => es.some((e) => e.reason === 'VolumeLost' && e.type === 'Warning'), {
      what: 'Warning VolumeLost on the claim',
    });
    await waitFor(() => eventsFor(stack.kube, 'default', 'PersistentVolume', lostPv.metadata!.name!), (es) => es.some((e) => e.reason === 'VolumeLost'), {
      what: 'Warning VolumeLost on the PV',
    });

    const cleaned = await audit('--delete');
    expect(cleaned.deletions.filter((d) => d.outcome === 'deleted').map((d) => d.volumeId).sort()).toEqual([orphanA!.id, orphanB!.id].sort());
    expect(cleaned.deletions).toHaveLength(2);
    for (const id of [orphanA!.id, orphanB!.id]) {
      await waitFor(() => volumeById(stack.ec2, id), (v) => v === undefined || v.State === 'deleting', { what: `orphan ${id} deleted` });
    }
    expect((await volumeById(stack.ec2, young!.id))?.State).toBe('available');
    expect((await volumeById(stack.ec2, drifted!.id))?.State).toBe('in-use');
    const healthy = (await provisionedVolumes(stack.ec2, stack.clusterId)).filter((v) => v.Tags?.some((t) => t.Key === Tags.pvcNamespace && t.Value === ns));
    expect(healthy).toHaveLength(20);

    const again = await audit('--delete');
    expect(again.orphans).toEqual([]);
    expect(again.deletions).toEqual([]);
  }, 240_000);

  it('claim deleted while its disk is being created (external-provisioner #1469), five times over -> no disk of those claims is left, by provisioning or at worst by the audit', async () => {
    const ns = 'race';
    await createNamespace(stack.kube, ns);
    const uids: string[] = [];
    // Each CreateVolume held about 2 s of wall time before EC2 acts: a claim is seen protected
    // with its disk still to come, the window the deletes race (at the stack's time scale the
    // whole provisioning is otherwise over between two looks).
    const sim = stack.simulator!;
    const { timeScale } = sim.configure({});
    sim.configure({ faults: { CreateVolume: { rate: 1, delayMs: 2_000 * timeScale } } });
    for (let i = 0; i < 5; i++) {
      const created = await createClaim(stack.kube, ns, `racer-${i}`, { storageClassName: IMMEDIATE_CLASS });
      uids.push(created.metadata!.uid!);
      // Deleted at once, or as soon as the backend has begun (its protection is on the claim,
      // CreateVolume next or in flight): the create races the delete.
      if (i % 2 === 1) await waitFor(() => readClaim(stack.kube, ns, `racer-${i}`), (pvc) => (pvc.metadata?.finalizers ?? []).includes(Finalizers.claimProtection), {
        what: `racer-${i} protected`,
      });
      await stack.kube.core.deleteNamespacedPersistentVolumeClaim({ namespace: ns, name: `racer-${i}` });
    }
    sim.configure({ faults: {} });
    const disksOf = async () =>
      (await provisionedVolumes(stack.ec2, stack.clusterId)).filter(
        (v) => uids.some((uid) => v.Tags?.some((t) => t.Key === Tags.csiVolumeName && t.Value === `pvc-${uid}`)) && v.State !== 'deleting',
      );
    // Claims gone from the cluster; then whatever disk is left is the audit's.
    await waitFor(async () => (await stack.kube.core.listNamespacedPersistentVolumeClaim({ namespace: ns })).items.length, (n) => n === 0, {
      what: 'the claims gone (a protected claim waits out any CreateVolume that may still land, ~90 s)',
      timeoutMs: 150_000,
    }).catch(async (err: Error) => {
      const left = (await stack.kube.core.listNamespacedPersistentVolumeClaim({ namespace: ns })).items;
      throw new Error(`${err.message}\n${JSON.stringify(left.map((c) => ({ name: c.metadata?.name, fin: c.metadata?.finalizers, del: c.metadata?.deletionTimestamp, vn: c.spec?.volumeName, phase: c.status?.phase })))}\n${JSON.stringify(ctx.results.filter((r) => r.key.includes('race') || r.key.includes('Deleted')).slice(-10))}`);
    });
    await waitFor(disksOf, (disks) => disks.every((v) => v.State !== 'creating'), { what: 'no disk of the racers still creating' });
    await freshReport(Date.now() + 1000);
    // The first audit marks what is left; the next, after a report received since, deletes it.
    const marked = await audit('--delete', '--grace', '0s');
    expect(marked.deletions.every((d) => d.outcome === 'marked')).toBe(true);
    await freshReport(Date.now());
    const result = await audit('--delete', '--grace', '0s');
    expect(result.deletions.every((d) => d.outcome === 'deleted')).toBe(true);
    await waitFor(disksOf, (disks) => disks.length === 0, { what: 'no disk of the racing claims left', report: (disks) => disks.map((d) => `${d.VolumeId} ${d.State}`) });
  }, 300_000);
});

/** The snapshot with this ID, as any EC2 client sees it (undefined once gone). */
async function snapshotById(snapshotId: string) {
  const { Snapshots } = await stack.ec2.send(new DescribeSnapshotsCommand({ OwnerIds: ['self'], Filters: [{ Name: 'snapshot-id', Values: [snapshotId] }] }));
  return Snapshots?.[0];
}

function snapshotTags(content: string, clusterId = stack.clusterId): Record<string, string> {
  return { [Tags.csiVolumeSnapshotName]: content, [Tags.ebsCluster]: 'true', [Tags.cluster(clusterId)]: 'owned', [Tags.volhookCluster]: clusterId };
}

describe('cluster audit: snapshots', () => {
  it('an orphaned snapshot, one a pre-provisioned Retain content names, one a content names that EC2 lost -> exactly 1 orphaned snapshot and 1 lost; --delete deletes exactly the orphan; again -> none', async () => {
    const sim = stack.simulator!;
    const custom = kubeConfigOf(stack).makeApiClient(CustomObjectsApi);
    const old = new Date(Date.now() - 2 * HOUR).toISOString();
    const volumeId = 'vol-0123456789abcdef0';
    const [orphan] = sim.seedSnapshots({ volumeId, sizeGiB: 40, tags: snapshotTags(`snapcontent-${randomUUID()}`), startedAt: old });
    const [named] = sim.seedSnapshots({ volumeId, sizeGiB: 8, tags: snapshotTags(`snapcontent-${randomUUID()}`), startedAt: old });
    const [lost] = sim.seedSnapshots({ volumeId, sizeGiB: 8, tags: snapshotTags(`snapcontent-${randomUUID()}`), startedAt: old });
    const contentFor = (name: string, snapshotHandle: string) => ({
      apiVersion: `${SNAPSHOT_API_GROUP}/v1`,
      kind: 'VolumeSnapshotContent',
      metadata: { name },
      spec: { driver: 'ebs.csi.aws.com', deletionPolicy: 'Retain', source: { snapshotHandle }, volumeSnapshotRef: { namespace: 'backups', name } },
    });
    const contents = { group: SNAPSHOT_API_GROUP, version: 'v1', plural: 'volumesnapshotcontents' };
    for (const [name, id] of [['imported-kept', named!.id], ['imported-lost', lost!.id]] as const) {
      await custom.createClusterCustomObject({ ...contents, body: contentFor(name, id) });
      await waitFor(
        () => custom.getClusterCustomObject({ ...contents, name }) as Promise<{ status?: { readyToUse?: boolean } }>,
        (c) => c.status?.readyToUse === true,
        { what: `content ${name} ready (its snapshot checked by volhook)` },
      );
    }
    // The second content's snapshot is deleted behind volhook's back.
    await stack.ec2.send(new DeleteSnapshotCommand({ SnapshotId: lost!.id }));
    await freshReport(Date.now() + 1000);

    const first = await audit();
    expect(first.orphanedSnapshots.map((o) => o.snapshotId)).toEqual([orphan!.id]);
    expect(first.orphanedSnapshots[0]).toMatchObject({ deletable: true, sizeGiB: 40, monthlyUsd: 2 });
    expect(first.snapshotTotals).toEqual({ orphanedSnapshots: 1, orphanedSnapshotGiB: 40, orphanedSnapshotMonthlyUsd: 2 });
    expect(first.lostSnapshots).toEqual([{ snapshotId: lost!.id, content: 'imported-lost', contentUid: expect.any(String), deletionPolicy: 'Retain' }]);
    expect(first.snapshotDeletions).toEqual([]);

    // The lost snapshot's Warning Event reaches its content with the answer to the next report.
    await freshReport(Date.now());
    await waitFor(() => eventsFor(stack.kube, 'default', 'VolumeSnapshotContent', 'imported-lost'), (es) => es.some((e) => e.reason === 'SnapshotLost' && e.type === 'Warning'), {
      what: 'Warning SnapshotLost on the content',
    });

    // --delete alone leaves snapshots: deleting them is asked for on its own.
    const disksOnly = await audit('--delete');
    expect(disksOnly.snapshotDeletions).toEqual([]);
    expect((await snapshotById(orphan!.id))?.State).toBe('completed');

    const cleaned = await audit('--delete-snapshots');
    expect(cleaned.snapshotDeletions).toEqual([{ snapshotId: orphan!.id, outcome: 'deleted' }]);
    await waitFor(() => snapshotById(orphan!.id), (found) => found === undefined, { what: `orphaned snapshot ${orphan!.id} deleted` });
    expect((await snapshotById(named!.id))?.State).toBe('completed');

    const again = await audit('--delete-snapshots', '--grace', '0s');
    expect(again.orphanedSnapshots).toEqual([]);
    expect(again.snapshotDeletions).toEqual([]);
  }, 120_000);
});

describe('cluster remove --delete-volumes', () => {
  it('a cluster with 5 disks and 2 snapshots -> lists them; without a terminal and without --yes refuses and deletes nothing; with --yes deletes them and the registration', async () => {
    const registry = join(localDir, 'gone-registry.json');
    const reportsDir = join(localDir, 'gone-reports');
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const { writeFile } = await import('node:fs/promises');
    await writeFile(registry, JSON.stringify({ clusters: { gone: { clusterId: 'gone', secrets: [secret], region: stack.region } } }));
    const tags = { [Tags.ebsCluster]: 'true', [Tags.cluster('gone')]: 'owned', [Tags.volhookCluster]: 'gone' };
    const seeded = stack.simulator!.seedVolumes({ zone: stack.nodes[0]!.zone, sizeGiB: 4, tags, count: 5 });
    const snapshots = stack.simulator!.seedSnapshots({ volumeId: seeded[0]!.id, sizeGiB: 4, tags: snapshotTags(`snapcontent-${randomUUID()}`, 'gone'), count: 2 });
    const ec2Client = () => new EC2Client({ region: stack.region, endpoint: stack.urls.ec2, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const args = ['remove', 'gone', '--delete-volumes', '--file', registry, '--reports-dir', reportsDir];

    const refused = await cluster(args, { ec2Client });
    expect(refused.code).toBe(1);
    for (const v of [...seeded, ...snapshots]) expect(refused.stdout).toContain(v.id);
    expect(refused.stdout.trim().split('\n')).toHaveLength(1 + 5 + 1 + 2);
    expect(refused.stderr).toContain('refusing to delete 5 disk(s) and 2 snapshot(s) without a confirmation');
    for (const v of seeded) expect((await volumeById(stack.ec2, v.id))?.State).toBe('available');
    for (const s of snapshots) expect((await snapshotById(s.id))?.State).toBe('completed');

    const removed = await cluster([...args, '--yes'], { ec2Client });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toContain('deleted 5 of 5 disk(s) and 2 of 2 snapshot(s)');
    for (const s of snapshots) expect(await snapshotById(s.id)).toBeUndefined();
    for (const v of seeded) {
      await waitFor(() => volumeById(stack.ec2, v.id), (found) => found === undefined || found.State === 'deleting', { what: `${v.id} deleted` });
    }
    const shown = await cluster(['show', 'gone', '--file', registry]);
    expect(shown.code).toBe(1);
  }, 60_000);
});
