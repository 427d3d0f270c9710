/**
 * `npm run cluster -- adopt`: against the EC2 simulator seeded with disks as the EBS CSI
 * controller (v1.64) tags them in its common configurations (research §5.2), one as the in-tree
 * plugin made them, one of another cluster, one owned but without `volhook.io/cluster` and one
 * already adopted; and disks and snapshots volhook made before it wrote `volhook.io/cluster`.
 * PVs come from a `kubectl get pv -o json` file or from a (local) API server through a kubeconfig.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CreateVolumeCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runClusterCli, VOLUMES_PER_CREATE_TAGS, type DiskAdoption } from '../../lib/cli/index.js';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { ManualClock, startEc2Simulator, type RunningEc2Simulator } from '../../lib/local/ec2/index.js';
import { createObjectStore, startKubeApiServer } from '../../lib/local/kube/index.js';
import { CLUSTER, pvItem, reconcileOne, setup } from '../reconcile/fixtures.js';
import { BEING_CREATED, BEING_DELETED, contentItem } from '../reconcile/snapshot-fixtures.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const uid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const pvName = (n: number) => `pvc-${uid(n)}`;

let sim: RunningEc2Simulator;
let ec2: EC2Client;
let dir: string;
let registry: string;
const clock = new ManualClock(Date.UTC(2025, 5, 1, 12));

beforeEach(async () => {
  sim = await startEc2Simulator({ host: '127.0.0.1', port: 0, seed: 7, throttling: false }, clock);
  ec2 = new EC2Client({ endpoint: sim.url, region: 'us-east-1', credentials, maxAttempts: 1 });
  dir = mkdtempSync(join(tmpdir(), 'volhook-adopt-'));
  registry = join(dir, 'clusters.json');
  // The cluster is registered as `npm run cluster -- add` would have it.
  expect((await cli('add', CLUSTER, '--region', 'us-east-1', '--file', registry)).code).toBe(0);
});
afterEach(async () => {
  ec2.destroy();
  await sim.close();
});

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runClusterCli(argv, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: {},
    ec2Client: (region, endpoint) => new EC2Client({ region, endpoint: endpoint ?? sim.url, credentials, maxAttempts: 1 }),
  });
  return { code, stdout, stderr };
}

/** A volume with exactly these tags, available (the clock moves past its creation). */
async function seedDisk(tags: Record<string, string>): Promise<string> {
  const out = await ec2.send(
    new CreateVolumeCommand({
      AvailabilityZone: 'us-east-1a',
      Size: 10,
      VolumeType: 'gp3',
      TagSpecifications: [{ ResourceType: 'volume', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }],
    }),
  );
  clock.advance(60_000);
  return out.VolumeId!;
}

/** Every volume's tags, as DescribeVolumes answers. */
async function allTags(): Promise<Record<string, Record<string, string>>> {
  const out = await ec2.send(new DescribeVolumesCommand({}));
  return Object.fromEntries(
    (out.Volumes ?? []).map((v) => [v.VolumeId!, Object.fromEntries((v.Tags ?? []).map((t) => [t.Key!, t.Value!]))]),
  );
}

// The tag sets the EBS CSI controller writes (research §5.2), by configuration.
const csiChartDefault = (n: number) => ({
  CSIVolumeName: pvName(n),
  'ebs.csi.aws.com/cluster': 'true',
  'kubernetes.io/created-for/pvc/name': `data-${n}`,
  'kubernetes.io/created-for/pvc/namespace': 'shop',
  'kubernetes.io/created-for/pv/name': pvName(n),
});
const csiWithoutExtraMetadata = (n: number) => ({
  CSIVolumeName: pvName(n),
  'ebs.csi.aws.com/cluster': 'true',
  'ebs.csi.aws.com/IOPSPerGb': '50',
});
const csiWithClusterId = (n: number, id: string) => ({
  ...csiChartDefault(n),
  [`kubernetes.io/cluster/${id}`]: 'owned',
  Name: `${id}-dynamic-${pvName(n)}`,
  KubernetesCluster: id,
  'ebs.csi.aws.com/cluster-name': id,
});
/** The in-tree plugin (kube-controller-manager's AWS cloud provider, no cluster ID). */
/** As volhook tagged its disks before it wrote volhook.io/cluster. */
const volhookPreChange = (n: number) => ({
  ...csiChartDefault(n),
  [`kubernetes.io/cluster/${CLUSTER}`]: 'owned',
});
/** As volhook tags a disk it makes now (or one adopted now). */
const adopted = (n: number) => ({ ...volhookPreChange(n), 'volhook.io/cluster': CLUSTER, 'ebs.csi.aws.com/cluster-name': CLUSTER });
const inTreeMade = (n: number) => ({
  'kubernetes.io/created-for/pvc/name': `data-${n}`,
  'kubernetes.io/created-for/pvc/namespace': 'shop',
  'kubernetes.io/created-for/pv/name': pvName(n),
  Name: `kubernetes-dynamic-${pvName(n)}`,
});

const csiPv = (n: number, volumeId: string) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: pvName(n), annotations: { 'pv.kubernetes.io/provisioned-by': 'ebs.csi.aws.com' } },
  spec: {
    capacity: { storage: '10Gi' },
    accessModes: ['ReadWriteOnce'],
    persistentVolumeReclaimPolicy: 'Delete',
    storageClassName: 'gp3',
    claimRef: { kind: 'PersistentVolumeClaim', namespace: 'shop', name: `data-${n}`, uid: uid(n) },
    csi: { driver: 'ebs.csi.aws.com', volumeHandle: volumeId, fsType: 'ext4' },
  },
  status: { phase: 'Bound' },
});
const inTreePv = (n: number, volumeId: string) => {
  const { csi: _csi, ...spec } = csiPv(n, volumeId).spec;
  return {
    ...csiPv(n, volumeId),
    metadata: { name: pvName(n), annotations: { 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs' } },
    spec: { ...spec, storageClassName: 'gp2', awsElasticBlockStore: { volumeID: `aws://us-east-1a/${volumeId}`, fsType: 'ext4' } },
  };
};
const nfsPv = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name: 'shared-nfs' },
  spec: { capacity: { storage: '1Ti' }, accessModes: ['ReadWriteMany'], nfs: { server: '10.0.0.2', path: '/export' } },
};

function pvFile(items: unknown[]): string {
  const path = join(dir, `pvs-${items.length}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items }, null, 2));
  return path;
}

/** The seeded world: the cluster's disks of every kind, another cluster's, one nobody's PV names. */
async function seedWorld() {
  const vol = {
    chartDefault: await seedDisk(csiChartDefault(1)),
    chartDefault2: await seedDisk(csiChartDefault(2)),
    noMetadata: await seedDisk(csiWithoutExtraMetadata(3)),
    inTree: await seedDisk(inTreeMade(4)),
    otherCluster: await seedDisk(csiWithClusterId(5, 'beta')),
    owned: await seedDisk(csiWithClusterId(6, CLUSTER)),
    unnamed: await seedDisk(csiChartDefault(7)),
    current: await seedDisk(adopted(10)),
  };
  const missing = 'vol-0000000000000dead';
  const pvs = [
    csiPv(1, vol.chartDefault),
    csiPv(2, vol.chartDefault2),
    csiPv(3, vol.noMetadata),
    inTreePv(4, vol.inTree),
    // A static PV of this cluster naming another cluster's disk.
    csiPv(5, vol.otherCluster),
    csiPv(6, vol.owned),
    csiPv(10, vol.current),
    csiPv(8, missing),
    nfsPv,
  ];
  return { vol, missing, pvs, file: pvFile(pvs) };
}

const owned = { [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'volhook.io/cluster': CLUSTER, 'ebs.csi.aws.com/cluster-name': CLUSTER };

/** Exactly the tags adopt adds to each of the seeded cluster's disks (and why, in adopt-plan.ts). */
function expectedAdditions(vol: Awaited<ReturnType<typeof seedWorld>>['vol']) {
  return {
    // Chart default: everything but the cluster tag is there already.
    [vol.chartDefault]: owned,
    [vol.chartDefault2]: owned,
    // Without --extra-create-metadata: the created-for tags from the PV and its claimRef.
    [vol.noMetadata]: {
      ...owned,
      'kubernetes.io/created-for/pv/name': pvName(3),
      'kubernetes.io/created-for/pvc/name': 'data-3',
      'kubernetes.io/created-for/pvc/namespace': 'shop',
    },
    // In-tree: the IAM scope tag and the CSI volume name as well.
    [vol.inTree]: { ...owned, 'ebs.csi.aws.com/cluster': 'true', CSIVolumeName: pvName(4) },
    // Made with --k8s-tag-cluster-id: owned, all but the cluster id IAM compares.
    [vol.owned]: { 'volhook.io/cluster': CLUSTER },
  };
}

const byVolume = (stdout: string) => new Map((JSON.parse(stdout).disks as DiskAdoption[]).map((d) => [d.volumeId, d]));

describe('cluster adopt against the EC2 simulator', () => {
  it('dry run -> prints what it would tag, and changes no tag of any volume', async () => {
    const { vol, missing, file } = await seedWorld();
    const before = await allTags();
    sim.sim.resetStats();

    const table = await cli('adopt', CLUSTER, '--pvs', file, '--file', registry);
    const json = await cli('adopt', CLUSTER, '--pvs', file, '--file', registry, '--json');

    expect(await allTags()).toEqual(before);
    expect(sim.sim.getStats().actions.CreateTags).toBeUndefined();
    // Another cluster's disk is among the PVs' disks: the run says so with exit 1.
    expect(table.code).toBe(1);
    expect(json.code).toBe(1);
    expect(table.stdout).toMatch(new RegExp(`^${vol.chartDefault} +${pvName(1)} +would tag +kubernetes.io/cluster/${CLUSTER}=owned volhook.io/cluster=${CLUSTER} ebs.csi.aws.com/cluster-name=${CLUSTER}$`, 'm'));
    expect(table.stdout).toMatch(new RegExp(`^${vol.otherCluster} +${pvName(5)} +LEFT ALONE: another cluster +tagged kubernetes.io/cluster/beta=owned$`, 'm'));
    expect(table.stdout).toMatch(new RegExp(`^${vol.owned} +${pvName(6)} +would tag +volhook.io/cluster=${CLUSTER}$`, 'm'));
    expect(table.stdout).toMatch(new RegExp(`^${vol.current} +${pvName(10)} +already adopted`, 'm'));
    expect(table.stdout).toMatch(new RegExp(`^${missing} +${pvName(8)} +no such disk`, 'm'));
    expect(table.stdout).not.toContain(vol.unnamed);
    expect(table.stderr).toMatch(/5 to tag, 1 already adopted, 1 left alone, 1 without a disk; 1 PV\(s\) of other drivers ignored\.\ndry run: nothing was tagged/);

    const rows = byVolume(json.stdout);
    expect(JSON.parse(json.stdout)).toMatchObject({ clusterId: CLUSTER, region: 'us-east-1', applied: false, otherPvs: 1 });
    for (const [volumeId, tags] of Object.entries(expectedAdditions(vol))) {
      expect(rows.get(volumeId)).toMatchObject({ status: 'tag' });
      expect(rows.get(volumeId)?.tags).toEqual(tags);
    }
    expect(rows.get(vol.otherCluster)).toMatchObject({ status: 'other-cluster', tags: {}, pvs: [pvName(5)] });
    expect(rows.get(vol.current)).toMatchObject({ status: 'adopted', tags: {} });
    expect(rows.get(missing)).toMatchObject({ status: 'not-found' });
  });

  it('--apply -> tags exactly the cluster disks, with exactly the planned tags; the other cluster disk is untouched and reported', async () => {
    const { vol, file } = await seedWorld();
    const before = await allTags();

    const res = await cli('adopt', CLUSTER, '--pvs', file, '--file', registry, '--apply', '--json');

    expect(res.code).toBe(1);
    const after = await allTags();
    const added = expectedAdditions(vol);
    for (const id of Object.keys(before)) {
      expect(after[id], id).toEqual({ ...before[id], ...(added[id] ?? {}) });
    }
    expect(Object.keys(added).sort()).toEqual([vol.chartDefault, vol.chartDefault2, vol.inTree, vol.noMetadata, vol.owned].sort());
    const rows = byVolume(res.stdout);
    expect([...rows.values()].filter((r) => r.status === 'tagged').map((r) => r.volumeId).sort()).toEqual(Object.keys(added).sort());
    expect(rows.get(vol.otherCluster)).toMatchObject({ status: 'other-cluster', detail: 'tagged kubernetes.io/cluster/beta=owned' });
    expect(res.stderr).toMatch(/5 tagged, 1 already adopted, 1 left alone/);
    // The two chart-default disks need the same tags: one CreateTags for both.
    expect(sim.sim.getStats().actions.CreateTags).toMatchObject({ calls: 4, ok: 4 });
  });

  it('--apply twice -> the second run finds every disk already adopted and tags nothing; exit 0 without another cluster disk', async () => {
    const { vol, pvs } = await seedWorld();
    const file = pvFile(pvs.filter((pv) => !JSON.stringify(pv).includes(vol.otherCluster)));
    expect((await cli('adopt', CLUSTER, '--pvs', file, '--file', registry, '--apply')).code).toBe(0);
    const tagged = await allTags();
    sim.sim.resetStats();

    const again = await cli('adopt', CLUSTER, '--pvs', file, '--file', registry, '--apply', '--json');

    expect(again.code).toBe(0);
    expect(await allTags()).toEqual(tagged);
    expect(sim.sim.getStats().actions.CreateTags).toBeUndefined();
    expect([...byVolume(again.stdout).values()].map((r) => r.status).sort()).toEqual(['adopted', 'adopted', 'adopted', 'adopted', 'adopted', 'adopted', 'not-found']);
  });

  it('a disk at the 50-tag limit in a batch -> it alone fails (exit 1); the rest of its batch is tagged', async () => {
    const { vol } = await seedWorld();
    const extra = Object.fromEntries(Array.from({ length: 45 }, (_, n) => [`team/label-${n}`, 'x']));
    const full = await seedDisk({ ...csiChartDefault(9), ...extra });
    const file = pvFile([csiPv(1, vol.chartDefault), csiPv(9, full), csiPv(2, vol.chartDefault2)]);

    const res = await cli('adopt', CLUSTER, '--pvs', file, '--file', registry, '--apply', '--json');

    expect(res.code).toBe(1);
    const rows = byVolume(res.stdout);
    expect(rows.get(full)).toMatchObject({ status: 'failed', detail: expect.stringContaining('TagLimitExceeded') });
    expect(rows.get(vol.chartDefault)?.status).toBe('tagged');
    expect(rows.get(vol.chartDefault2)?.status).toBe('tagged');
    const after = await allTags();
    expect(after[vol.chartDefault]).toMatchObject(owned);
    expect(after[full]).not.toHaveProperty(`kubernetes.io/cluster/${CLUSTER}`);
    // The cluster's own disk no PV of the file names is found by the cluster's tag, and tagged too.
    expect(rows.get(vol.owned)).toMatchObject({ pvs: [], status: 'tagged', tags: { 'volhook.io/cluster': CLUSTER } });
    // One batch refused, then one call per volume; one more for the cluster's own disk.
    expect(sim.sim.getStats().actions.CreateTags).toMatchObject({ calls: 5, ok: 3 });
    expect(VOLUMES_PER_CREATE_TAGS).toBeLessThanOrEqual(1000);
  });

  it('after adoption, volhook reclaims the disk: a Released Delete PV is NotOwned before and deletes it after', async () => {
    const chartDefault = await seedDisk(csiChartDefault(1));
    const { ctx } = setup();
    const released = pvItem({ pv: { metadata: { name: pvName(1) }, spec: { csi: { volumeHandle: chartDefault } }, status: { phase: 'Released' } } });
    const reclaim = () => reconcileOne({ ...ctx, ec2: createEc2Gateway({ client: ec2, clusterId: CLUSTER, batchWindowMs: 0 }) }, released);

    expect(await reclaim()).toMatchObject({ outcome: 'failed', reason: 'NotOwned' });
    expect((await cli('adopt', CLUSTER, '--pvs', pvFile([csiPv(1, chartDefault)]), '--file', registry, '--apply')).code).toBe(0);
    await reclaim();
    expect(sim.sim.volume(chartDefault)?.state).toMatch(/deleting|deleted/);
    expect(sim.sim.getStats().actions.DeleteVolume).toMatchObject({ ok: 1 });
  });

  it('a disk tagged kubernetes.io/cluster/<id>=shared -> left alone as a conflict, exit 1', async () => {
    const shared = await seedDisk({ ...csiChartDefault(1), [`kubernetes.io/cluster/${CLUSTER}`]: 'shared' });
    const res = await cli('adopt', CLUSTER, '--pvs', pvFile([csiPv(1, shared)]), '--file', registry, '--apply', '--json');
    expect(res.code).toBe(1);
    expect(byVolume(res.stdout).get(shared)).toMatchObject({ status: 'conflict', detail: expect.stringContaining(`kubernetes.io/cluster/${CLUSTER}=shared`) });
    expect((await allTags())[shared]).toEqual({ ...csiChartDefault(1), [`kubernetes.io/cluster/${CLUSTER}`]: 'shared' });
  });

  it('PVs read through a kubeconfig (the current context) -> the same plan as from the file', async () => {
    const { vol, pvs } = await seedWorld();
    const store = createObjectStore();
    for (const pv of pvs) store.create('persistentvolumes', pv as never);
    const api = await startKubeApiServer({ store, port: 0, host: '127.0.0.1' });
    try {
      const kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(
        kubeconfig,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          `- name: local\n  cluster:\n    server: ${api.url}\n    insecure-skip-tls-verify: true`,
          'users:',
          '- name: admin\n  user:\n    token: local',
          'contexts:',
          '- name: local\n  context:\n    cluster: local\n    user: admin',
          'current-context: local',
          '',
        ].join('\n'),
      );
      const fromCluster = await cli('adopt', CLUSTER, '--kubeconfig', kubeconfig, '--file', registry, '--json');
      const fromFile = await cli('adopt', CLUSTER, '--pvs', pvFile(pvs), '--file', registry, '--json');
      expect(fromCluster.stderr).not.toMatch(/error/);
      expect(JSON.parse(fromCluster.stdout)).toEqual(JSON.parse(fromFile.stdout));
      expect(byVolume(fromCluster.stdout).get(vol.inTree)?.status).toBe('tag');

      const badContext = await cli('adopt', CLUSTER, '--kubeconfig', kubeconfig, '--context', 'prod', '--file', registry);
      expect(badContext.code).toBe(2);
      expect(badContext.stderr).toContain('--context: no context "prod"');
    } finally {
      await api.close();
    }
  });
});

describe('cluster adopt: disks and snapshots volhook made before volhook.io/cluster', () => {
  async function seedPreChange() {
    // A Released Delete PV's disk, one whose claim is still being provisioned (no PV yet), and a snapshot.
    const released = await seedDisk(volhookPreChange(1));
    const provisioning = await seedDisk(volhookPreChange(2));
    const [snapshot] = sim.sim.seedSnapshots({
      volumeId: released,
      tags: { CSIVolumeSnapshotName: 'snapcontent-1', 'ebs.csi.aws.com/cluster': 'true', [`kubernetes.io/cluster/${CLUSTER}`]: 'owned' },
      startedAt: new Date(clock.now()).toISOString(),
    });
    return { released, provisioning, snapshot: snapshot!.id, file: pvFile([{ ...csiPv(1, released), status: { phase: 'Released' } }]) };
  }
  const gateway = () => createEc2Gateway({ client: ec2, clusterId: CLUSTER, batchWindowMs: 0 });
  const reclaim = (volumeId: string) => {
    const { ctx } = setup();
    return reconcileOne({ ...ctx, ec2: gateway() }, pvItem({ pv: { metadata: { name: pvName(1) }, spec: { csi: { volumeHandle: volumeId } }, status: { phase: 'Released' } } }));
  };
  const deleteContent = (snapshotId: string) => {
    const { ctx } = setup();
    const item = contentItem({
      content: { metadata: { deletionTimestamp: '2025-03-01T11:59:00Z', annotations: { [BEING_CREATED]: undefined, [BEING_DELETED]: 'yes' } }, spec: { source: { volumeHandle: undefined, snapshotHandle: snapshotId } }, status: { snapshotHandle: snapshotId, readyToUse: true } },
    });
    return reconcileOne({ ...ctx, ec2: gateway() }, item);
  };

  it('refused by the backend, naming adopt; the dry run lists them, --apply tags them (the report says how many), a second run tags nothing; then the backend deletes them', async () => {
    const { released, provisioning, snapshot, file } = await seedPreChange();
    const fix = `run \`npm run cluster -- adopt ${CLUSTER} --apply\` to tag it (nothing was done`;

    // Before: the backend finds them and refuses, EC2 untouched.
    const refused = await reclaim(released);
    expect(refused).toMatchObject({ outcome: 'failed', reason: 'NotAdopted', message: expect.stringContaining(`volume ${released} was made by volhook before volume tags carried volhook.io/cluster; ${fix}`) });
    expect(await deleteContent(snapshot)).toMatchObject({ outcome: 'failed', reason: 'NotAdopted', message: expect.stringContaining(`snapshot ${snapshot} was made by volhook before snapshot tags carried volhook.io/cluster; ${fix}`) });
    expect(sim.sim.getStats().actions.DeleteVolume).toBeUndefined();
    expect(sim.sim.getStats().actions.DeleteSnapshot).toBeUndefined();

    // The dry run: each listed with the one tag it lacks, nothing tagged.
    const before = await allTags();
    const dry = await cli('adopt', CLUSTER, '--pvs', file, '--file', registry);
    expect(dry.code).toBe(0);
    const lacked = `volhook.io/cluster=${CLUSTER} ebs.csi.aws.com/cluster-name=${CLUSTER}`;
    expect(dry.stdout).toMatch(new RegExp(`^${released} +${pvName(1)} +would tag +${lacked}$`, 'm'));
    expect(dry.stdout).toMatch(new RegExp(`^${provisioning} +\\(none\\) +would tag +${lacked} no PersistentVolume names it: cluster tags only$`, 'm'));
    expect(dry.stdout).toMatch(new RegExp(`^${snapshot} +${released} +would tag +${lacked}$`, 'm'));
    expect(dry.stderr).toMatch(/2 to tag, 0 already adopted; 1 snapshot\(s\) not adopted: 1 to tag\.\ndry run: nothing was tagged/);
    expect(await allTags()).toEqual(before);
    expect(sim.sim.getStats().actions.CreateTags).toBeUndefined();

    // --apply: the tag added with the operator's credentials, one CreateTags for all three (the same tag).
    const applied = await cli('adopt', CLUSTER, '--pvs', file, '--file', registry, '--apply', '--json');
    expect(applied.code).toBe(0);
    expect(applied.stderr).toMatch(/2 tagged, 0 already adopted; 1 snapshot\(s\) not adopted: 1 tagged\./);
    const report = JSON.parse(applied.stdout);
    expect(report.counts).toEqual({ tagged: 2 });
    expect(report.snapshotCounts).toEqual({ tagged: 1 });
    expect(sim.sim.getStats().actions.CreateTags).toMatchObject({ calls: 1, ok: 1 });
    const after = await allTags();
    for (const id of [released, provisioning]) expect(after[id]).toEqual({ ...before[id], 'volhook.io/cluster': CLUSTER, 'ebs.csi.aws.com/cluster-name': CLUSTER });
    expect(sim.sim.snapshot(snapshot)?.tags).toContainEqual({ key: 'volhook.io/cluster', value: CLUSTER });
    expect(sim.sim.snapshot(snapshot)?.tags).toContainEqual({ key: 'ebs.csi.aws.com/cluster-name', value: CLUSTER });

    // A second run: nothing left to tag.
    sim.sim.resetStats();
    const again = await cli('adopt', CLUSTER, '--pvs', file, '--file', registry, '--apply', '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ disks: [{ volumeId: released, status: 'adopted' }], snapshots: [] });
    expect(sim.sim.getStats().actions.CreateTags).toBeUndefined();

    // Now the backend acts on them.
    await reclaim(released);
    expect(sim.sim.volume(released)?.state).toMatch(/deleting|deleted/);
    expect(await deleteContent(snapshot)).toMatchObject({ outcome: 'done' });
    expect(sim.sim.snapshot(snapshot)).toBeUndefined();
  });

  it('a disk and a snapshot of the cluster whose volhook.io/cluster names another cluster -> never retagged, named in the report, exit 1', async () => {
    const disk = await seedDisk({ ...volhookPreChange(1), 'volhook.io/cluster': 'beta' });
    const [snapshot] = sim.sim.seedSnapshots({ volumeId: disk, tags: { 'ebs.csi.aws.com/cluster': 'true', [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'Volhook.io/Cluster': 'beta' } });
    const before = await allTags();
    const res = await cli('adopt', CLUSTER, '--pvs', pvFile([csiPv(1, disk)]), '--file', registry, '--apply', '--json');
    expect(res.code).toBe(1);
    const report = JSON.parse(res.stdout);
    expect(report.disks).toEqual([{ volumeId: disk, pvs: [pvName(1)], status: 'other-cluster', tags: {}, detail: 'tagged volhook.io/cluster=beta' }]);
    expect(report.snapshots).toEqual([{ snapshotId: snapshot!.id, volumeId: disk, status: 'other-cluster', tags: {}, detail: 'tagged Volhook.io/Cluster=beta' }]);
    expect(await allTags()).toEqual(before);
    expect(sim.sim.getStats().actions.CreateTags).toBeUndefined();
  });
});

describe('cluster adopt refuses before it reads or tags anything', () => {
  it.each([
    [['--pvs', '/nonexistent/pvs.json'], '--pvs: cannot read'],
    [['--pvs', 'NOT_JSON'], '--pvs'],
    [['--pvs', 'PVCS'], '--pvs'],
    [['--pvs', 'PVS', '--kubeconfig', '/tmp/kc'], '--pvs and --kubeconfig exclude each other'],
    [['--pvs', 'PVS', '--region', 'moon-1'], '--region'],
    [['--pvs', 'PVS', '--apply=yes'], '--apply takes no value'],
    [['--pvs', 'PVS', '--zones', 'us-east-1a'], '--zones does not apply to adopt'],
    [['--kubeconfig', '/nonexistent/kubeconfig'], '--kubeconfig: cannot load it'],
  ])('%j -> exit 2 naming %s, no EC2 call', async (args, named) => {
    const { file } = await seedWorld();
    const notJson = join(dir, 'not.json');
    writeFileSync(notJson, 'apiVersion: v1\nkind: List\n');
    const pvcs = join(dir, 'pvcs.json');
    writeFileSync(pvcs, JSON.stringify({ kind: 'List', items: [{ kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: {} }] }));
    const argv = args.map((a) => ({ PVS: file, NOT_JSON: notJson, PVCS: pvcs })[a] ?? a);
    sim.sim.resetStats();

    const res = await cli('adopt', CLUSTER, ...argv, '--file', registry);

    expect(res.code).toBe(2);
    expect(res.stderr).toContain(named);
    expect(res.stdout).toBe('');
    expect(sim.sim.getStats().total.calls).toBe(0);
  });

  it('a cluster id that is not registered -> exit 1, no EC2 call', async () => {
    const { file } = await seedWorld();
    sim.sim.resetStats();
    const res = await cli('adopt', 'alpah', '--pvs', file, '--file', registry, '--apply');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cluster "alpah" is not registered/);
    expect(sim.sim.getStats().total.calls).toBe(0);
  });
});

describe('bin/cluster.ts adopt as a child process (npx tsx)', () => {
  const run = (env: Record<string, string>, ...argv: string[]) =>
    promisify(execFile)('npx', ['tsx', 'bin/cluster.ts', ...argv], { cwd: repoRoot, env: { PATH: process.env.PATH, HOME: dir, ...env } }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
    );

  it('adopt --apply with the SDK default chain and AWS_ENDPOINT_URL_EC2 -> tags the cluster disks, exit 1 for the other cluster disk', async () => {
    const { vol, file } = await seedWorld();
    const before = await allTags();
    const env = { AWS_ENDPOINT_URL_EC2: sim.url, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_EC2_METADATA_DISABLED: 'true' };

    const res = await run(env, 'adopt', CLUSTER, '--pvs', file, '--file', registry, '--apply');

    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(new RegExp(`^${vol.chartDefault} +${pvName(1)} +tagged`, 'm'));
    expect(res.stdout).toMatch(new RegExp(`^${vol.otherCluster} +${pvName(5)} +LEFT ALONE: another cluster`, 'm'));
    expect(res.stderr).toMatch(/5 tagged/);
    const after = await allTags();
    for (const [id, tags] of Object.entries(expectedAdditions(vol))) expect(after[id]).toEqual({ ...before[id], ...tags });
    expect(after[vol.otherCluster]).toEqual(before[vol.otherCluster]);

    const bad = await run(env, 'adopt', CLUSTER, '--pvs', file, '--kubeconfig', '/tmp/kc', '--file', registry);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--pvs and --kubeconfig');
  }, 60_000);
});
