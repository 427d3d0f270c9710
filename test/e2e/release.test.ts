/**
 * `npm run cluster -- release <id>` over the local stack, as an operator runs it: the cluster
 * registered in the stack's registry file, the cluster read through a kubeconfig, a forwarder
 * with leader election on the Lease volhook-system/volhook-forwarder (short timings). Claims
 * are provisioned and attached by volhook; then the forwarder is stopped and release hands the
 * cluster back: the dry run lists what --apply then removes, exactly; --apply removes it,
 * deregisters, and makes no EC2 call. Refused while the forwarder runs, and while a claim volhook
 * was provisioning could still get a disk — each with its control.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EC2Client } from '@aws-sdk/client-ec2';
import { AppsV1Api, CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_DIR } from '../../infra/tools/chart.js';
import { runClusterCli, type ReleaseReport } from '../../lib/cli/index.js';
import { localPaths } from '../../lib/local/stack/index.js';
import { describeVolumes } from './support/ec2.js';
import { kubeToolsFor } from './support/helm.js';
import { createClaim, createNamespace, DRIVER, listAttachments, readClaim, readVolume } from './support/kube.js';
import { kubeConfigOf, onPlane, STACK_START_MS } from './support/plane.js';
import { provisionForPod, waitClaimBound, type ProvisionedForPod, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const PROTECTION = 'volhook.io/provisioning-protection';
const PROVISIONER = 'external-provisioner.volume.kubernetes.io/finalizer';
const ATTACHER = 'external-attacher/ebs-csi-aws-com';
const NODE_ID = 'csi.alpha.kubernetes.io/node-id';
const STRAY = 'volhook.io/stray';
const LEASE = { namespace: 'volhook-system', name: 'volhook-forwarder' };

let stack: E2eStack;
let ctx: ScenarioContext;
let dir: string;
let kubeconfig: string;
let registry: string;
let shop: ProvisionedForPod;
/** Every EC2 client the CLI asked for: release must ask for none. */
const ec2Clients: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'volhook-release-e2e-'));
  ({ stack, ctx } = await startScenarioStack({
    immediateClass: true,
    localDir: join(dir, 'local'),
    forwarder: { leaderElect: true, leaseNamespace: LEASE.namespace, leaseDurationSeconds: 2, renewDeadlineSeconds: 1, retryPeriodSeconds: 0.25 },
  }));
  registry = localPaths(join(dir, 'local')).registryFile;
  kubeconfig = join(dir, 'kubeconfig');
  await writeFile(kubeconfig, stack.operatorKubeconfig);
  // The Lease lives in the forwarder's namespace; the forwarder takes it once that exists. The
  // real plane made it already, with the forwarder's ServiceAccount and roles (the chart's).
  await onPlane({ simulated: () => createNamespace(stack.kube, LEASE.namespace), real: async () => undefined })();
  await waitFor(() => leaseHolder(), (holder) => holder !== '', { what: 'the forwarder holding its Lease' });
}, Math.max(90_000, STACK_START_MS));
afterAll(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function leaseHolder(): Promise<string> {
  const lease = await kubeConfigOf(stack).makeApiClient(CoordinationV1Api).readNamespacedLease(LEASE);
  return lease.spec?.holderIdentity ?? '';
}

async function release(...options: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  // A backend that has heard nothing from the cluster (an empty report directory): what it last
  // heard, and --apply's refusal on it, is test/cli/release-backend-heard.test.ts's.
  const quietBackend = join(dir, 'quiet-backend-reports');
  const code = await runClusterCli(['release', stack.clusterId, '--kubeconfig', kubeconfig, '--file', registry, '--reports-dir', quietBackend, ...options], {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: {},
    ec2Client: (region): EC2Client => {
      ec2Clients.push(region);
      throw new Error('release asked for an EC2 client');
    },
  });
  return { code, stdout, stderr };
}

const json = (out: { stdout: string }) => JSON.parse(out.stdout) as ReleaseReport;

/** Finalizers and annotations of every claim, PV and VolumeAttachment, by object. */
async function marksOfCluster(): Promise<Record<string, { finalizers: string[]; annotations: Record<string, string> }>> {
  const out: Record<string, { finalizers: string[]; annotations: Record<string, string> }> = {};
  const take = (key: string, meta: { finalizers?: string[]; annotations?: Record<string, string> } | undefined) =>
    (out[key] = { finalizers: [...(meta?.finalizers ?? [])].sort(), annotations: { ...(meta?.annotations ?? {}) } });
  for (const pvc of (await stack.kube.core.listPersistentVolumeClaimForAllNamespaces()).items) take(`PersistentVolumeClaim ${pvc.metadata?.namespace}/${pvc.metadata?.name}`, pvc.metadata);
  for (const pv of (await stack.kube.core.listPersistentVolume()).items) take(`PersistentVolume ${pv.metadata?.name}`, pv.metadata);
  for (const va of await listAttachments(stack.kube)) take(`VolumeAttachment ${va.metadata?.name}`, va.metadata);
  return out;
}

/** Every volume as EC2 has it: state, tags, attachments. */
async function ec2State(): Promise<unknown> {
  return (await describeVolumes(stack.ec2)).map((v) => ({ id: v.VolumeId, state: v.State, tags: v.Tags, attachments: v.Attachments?.map((a) => [a.InstanceId, a.State, a.Device]) })).sort((a, b) => String(a.id).localeCompare(String(b.id)));
}

const ec2Calls = () => stack.simulator!.getStats().total.calls;

async function registered(): Promise<boolean> {
  const file = JSON.parse(await readFile(registry, 'utf8')) as { clusters: Record<string, unknown> };
  return Object.hasOwn(file.clusters, stack.clusterId);
}

/**
 * The Deployment's ready replicas once settled: none on the simulated API (no deployment
 * controller, nothing runs), both on the real plane (its controllers make the pods, the node
 * agents report them Running and Ready).
 */
async function replicasReady(namespace: string, name: string): Promise<number> {
  const expected = onPlane({ simulated: 0, real: 2 });
  const apps = kubeConfigOf(stack).makeApiClient(AppsV1Api);
  await sleep(2_500);
  await waitFor(() => apps.readNamespacedDeployment({ namespace, name }), (d) => (d.status?.readyReplicas ?? 0) === expected, {
    what: `Deployment ${namespace}/${name} with ${expected} ready replica(s)`,
    report: (d) => d?.status,
  });
  return expected;
}

/**
 * Once the chart is uninstalled, its forwarder pods finish their grace (the real plane: the
 * node agents end them; the simulated API made none), and release refuses while one is still
 * Running, terminating or not: it may still write.
 */
async function forwarderPodsGone(namespace: string): Promise<void> {
  await waitFor(
    async () => (await stack.kube.core.listNamespacedPod({ namespace, labelSelector: 'app.kubernetes.io/name=volhook-forwarder' })).items,
    (pods) => pods.length === 0,
    { what: `no forwarder pod left in ${namespace}`, report: (pods) => pods.map((p) => [p.metadata?.name, p.status?.phase, p.metadata?.deletionTimestamp]) },
  );
}

async function patchClaim(namespace: string, name: string, ops: object[]): Promise<void> {
  await stack.kube.core.patchNamespacedPersistentVolumeClaim({ namespace, name, body: ops });
}

describe('cluster release over the local stack', () => {
  it('forwarder running (Lease fresh) -> dry run lists, exit 1; --apply refused, nothing changes; the registration stays', async () => {
    shop = await provisionForPod(ctx, 'shop');
    await createClaim(stack.kube, 'shop', 'logs', { storageClassName: IMMEDIATE_CLASS, size: '2Gi' });
    await waitClaimBound(ctx, 'shop', 'logs');
    // A mark of volhook's domain that no running volhook takes away: what release would remove.
    await stack.kube.core.patchPersistentVolume({ name: shop.pvName, body: [{ op: 'add', path: `/metadata/annotations/${STRAY.replace('/', '~1')}`, value: 'x' }] });
    await waitFor(() => leaseHolder(), (holder) => holder !== '', { what: 'the forwarder holding its Lease' });
    const before = await marksOfCluster();

    const dry = await release('--json');
    expect(dry.code, dry.stderr).toBe(1);
    expect(json(dry).marks.map((m) => `${m.target.name} ${m.key} ${m.status}`)).toEqual([`${shop.pvName} ${STRAY} remove`]);
    expect(dry.stderr).toMatch(/refused: Lease volhook-system\/volhook-forwarder is held by .*: a forwarder may be running/);
    expect(dry.stderr).toContain('--apply would refuse');

    const refused = await release('--apply');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused: Lease volhook-system\/volhook-forwarder is held by /);
    expect(await marksOfCluster()).toEqual(before);
    expect(await registered()).toBe(true);
  }, 180_000);

  it('forwarder stopped, a claim volhook is provisioning (its finalizer, no PV) -> --apply refused, nothing changes; once volhook settled it -> not held', async () => {
    await stack.forwarder()!.stop();
    expect(await leaseHolder()).toBe('');
    // As the forwarder leaves a claim it stopped for after writing the protection, before the
    // disk's PV: the claim pending, the finalizer on.
    await createClaim(stack.kube, 'shop', 'cache', { storageClassName: IMMEDIATE_CLASS, size: '1Gi' });
    await waitFor(() => readClaim(stack.kube, 'shop', 'cache'), (pvc) => !!pvc.metadata?.annotations?.['volume.kubernetes.io/storage-provisioner'], { what: 'the PV controller assigning shop/cache' });
    await patchClaim('shop', 'cache', [{ op: 'add', path: '/metadata/finalizers/-', value: PROTECTION }]);
    await sleep(2_500); // the released Lease (1 s) is past, by the second-grained Date too
    const before = await marksOfCluster();

    const dry = await release('--json');
    expect(dry.code).toBe(1);
    expect(json(dry).held).toEqual([expect.objectContaining({ namespace: 'shop', name: 'cache', why: expect.stringMatching(/volhook is provisioning it: a disk it asked EC2 for may exist or still land/) })]);
    expect(json(dry).marks.map((m) => m.key)).not.toContain(PROTECTION);
    expect(dry.stderr).not.toMatch(/refused: Lease/);

    const refused = await release('--apply');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused: claim shop\/cache: volhook is provisioning it: .*run the forwarder until volhook settles it/);
    expect(await marksOfCluster()).toEqual(before);
    expect(await registered()).toBe(true);

    // The way out the refusal names: volhook provisions it (PV written, finalizer dropped).
    await stack.restartForwarder();
    const bound = await waitClaimBound(ctx, 'shop', 'cache');
    await waitFor(() => readClaim(stack.kube, 'shop', 'cache'), (pvc) => !(pvc.metadata?.finalizers ?? []).includes(PROTECTION), { what: 'volhook dropping the protection of shop/cache' });
    expect(bound.spec?.volumeName).toMatch(/^pvc-/);
    await stack.forwarder()!.stop();
  }, 180_000);

  it("the forwarder's chart installed (its Deployment wants replicas) -> --apply refused naming it and its helm uninstall; after helm uninstall -> not refused for it", async () => {
    const tools = await kubeToolsFor(stack);
    try {
      // --take-ownership: on the real plane the stack made the forwarder's ServiceAccount and roles
      // from this chart's render already (lib/local/plane/cluster.ts); on the simulated API none exist.
      const installed = await tools.helm('upgrade', '--install', 'volhook-forwarder', CHART_DIR, '-n', LEASE.namespace, '--create-namespace', '--take-ownership',
        '--set', `backendUrl=${stack.urls.backend}`, '--set', `clusterId=${stack.clusterId}`, '--set', `secret.value=${stack.secret}`, '--set', 'csiDriver.create=false');
      expect(installed.stderr).toBe('');
      const ready = await replicasReady(LEASE.namespace, 'volhook-forwarder');
      const before = await marksOfCluster();

      const dry = await release('--json');
      expect(dry.code).toBe(1);
      expect(json(dry).refusals).toContain('Deployment volhook-system/volhook-forwarder wants 2 replica(s): uninstall the forwarder first');
      expect(json(dry).forwarder.seen).toContain(`Deployment volhook-system/volhook-forwarder: 2 replica(s) wanted, ${ready} ready (Helm release volhook-forwarder)`);
      expect(json(dry).forwarder.uninstall).toContain('helm uninstall volhook-forwarder -n volhook-system');
      const refused = await release('--apply');
      expect(refused.code).toBe(1);
      expect(await marksOfCluster()).toEqual(before);
      expect(await registered()).toBe(true);

      // The way out the refusal names.
      expect((await tools.helm('uninstall', 'volhook-forwarder', '-n', LEASE.namespace)).code).toBe(0);
      await forwarderPodsGone(LEASE.namespace);
      const after = await release('--json');
      expect(json(after).refusals).toEqual([]);
      expect(json(after).forwarder.seen).toContain('Deployment volhook-system/volhook-forwarder: none');
    } finally {
      await tools.close();
    }
  }, 120_000);

  it("the chart installed as release vh in namespace storage (its objects storage/vh) -> --apply refused naming them and helm uninstall vh -n storage; after it -> not refused", async () => {
    const tools = await kubeToolsFor(stack);
    try {
      const installed = await tools.helm('upgrade', '--install', 'vh', CHART_DIR, '-n', 'storage', '--create-namespace',
        '--set', `backendUrl=${stack.urls.backend}`, '--set', `clusterId=${stack.clusterId}`, '--set', `secret.value=${stack.secret}`, '--set', 'csiDriver.create=false');
      expect(installed.stderr).toBe('');
      const ready = await replicasReady('storage', 'vh');
      const before = await marksOfCluster();

      const dry = await release('--json');
      expect(dry.code).toBe(1);
      expect(json(dry).refusals).toContain('Deployment storage/vh wants 2 replica(s): uninstall the forwarder first');
      expect(json(dry).forwarder.seen).toContain(`Deployment storage/vh: 2 replica(s) wanted, ${ready} ready (Helm release vh)`);
      expect(json(dry).forwarder.seen).toContain(`ConfigMap storage/vh: VOLHOOK_CLUSTER_ID=${stack.clusterId}`);
      expect(json(dry).forwarder.uninstall).toContain('helm uninstall vh -n storage');
      const refused = await release('--apply');
      expect(refused.code).toBe(1);
      expect(await marksOfCluster()).toEqual(before);
      expect(await registered()).toBe(true);

      expect((await tools.helm('uninstall', 'vh', '-n', 'storage')).code).toBe(0);
      await forwarderPodsGone('storage');
      const after = await release('--json');
      expect(json(after).refusals).toEqual([]);
      expect(json(after).forwarder.seen.some((line) => line.startsWith('Deployment storage/vh'))).toBe(false);
    } finally {
      await tools.close();
    }
  }, 120_000);

  it('forwarder stopped -> the dry run lists X; --apply removes exactly X, fixes what it listed, deregisters; no EC2 call, every disk as it was; the objects as the CSI sidecars expect', async () => {
    // What a forwarder stopped mid-way leaves: a bound claim still protected; and what the
    // sidecars would trip over that volhook writes: a PV without the provisioner finalizer, an
    // attached VolumeAttachment without node-id.
    const logs = await readClaim(stack.kube, 'shop', 'logs');
    const logsPv = logs.spec?.volumeName ?? '';
    await patchClaim('shop', 'logs', [{ op: 'add', path: '/metadata/finalizers/-', value: PROTECTION }]);
    const pv = await readVolume(stack.kube, logsPv);
    const at = (pv.metadata?.finalizers ?? []).indexOf(PROVISIONER);
    expect(at).toBeGreaterThanOrEqual(0);
    await stack.kube.core.patchPersistentVolume({ name: logsPv, body: [{ op: 'test', path: `/metadata/finalizers/${at}`, value: PROVISIONER }, { op: 'remove', path: `/metadata/finalizers/${at}` }] });
    const [va] = (await listAttachments(stack.kube)).filter((a) => a.spec.source.persistentVolumeName === shop.pvName);
    expect(va?.metadata?.annotations?.[NODE_ID]).toBeDefined();
    await stack.kube.storage.patchVolumeAttachment({ name: va!.metadata!.name!, body: [{ op: 'remove', path: `/metadata/annotations/${NODE_ID.replace('/', '~1')}` }] });
    await sleep(2_500);

    const before = await marksOfCluster();
    const disksBefore = await ec2State();
    const callsBefore = ec2Calls();

    const table = await release();
    const dry = await release('--json');
    expect(table.code, table.stderr).toBe(0);
    expect(dry.code).toBe(0);
    const X = json(dry).marks.map((m) => `${m.target.kind} ${m.target.namespace ? `${m.target.namespace}/` : ''}${m.target.name} ${m.type} ${m.key}`);
    expect(X).toEqual([`PersistentVolumeClaim shop/logs finalizer ${PROTECTION}`, `PersistentVolume ${shop.pvName} annotation ${STRAY}`]);
    const fixes = json(dry).findings.filter((f) => f.status === 'fix').map((f) => `${f.target.kind} ${f.target.name} ${f.fix?.op}`);
    expect(fixes.sort()).toEqual([`PersistentVolume ${logsPv} addFinalizer`, `VolumeAttachment ${va!.metadata!.name} setAnnotation`]);
    expect(json(dry).held).toEqual([]);
    expect(json(dry).registration.status).toBe('remove');
    expect(table.stdout).toMatch(new RegExp(`^PersistentVolumeClaim +shop/logs +finalizer ${PROTECTION} +would remove +PV ${logsPv} exists`, 'm'));
    expect(table.stdout).toMatch(/Deployment volhook-system\/volhook-forwarder: none/);
    expect(table.stdout).toContain('helm uninstall volhook-forwarder -n volhook-system');
    expect(table.stderr).toContain('dry run: nothing was changed; run again with --apply');
    expect(await marksOfCluster()).toEqual(before);

    const applied = await release('--apply', '--json');
    expect(applied.code, applied.stderr).toBe(0);
    const report = json(applied);
    expect(report.applied).toBe(true);
    expect(report.marks.map((m) => `${m.target.kind} ${m.target.namespace ? `${m.target.namespace}/` : ''}${m.target.name} ${m.type} ${m.key}`)).toEqual(X);
    expect(report.marks.every((m) => m.status === 'removed')).toBe(true);
    expect(report.registration.status).toBe('removed');
    expect(applied.stderr).toContain('released: volhook has left the cluster');

    // Exactly X went, the fixes came, and nothing else changed.
    const after = await marksOfCluster();
    const expected = structuredClone(before);
    const logsKey = 'PersistentVolumeClaim shop/logs';
    expected[logsKey]!.finalizers = expected[logsKey]!.finalizers.filter((f) => f !== PROTECTION);
    delete expected[`PersistentVolume ${shop.pvName}`]!.annotations[STRAY];
    expected[`PersistentVolume ${logsPv}`]!.finalizers = [...expected[`PersistentVolume ${logsPv}`]!.finalizers, PROVISIONER].sort();
    expected[`VolumeAttachment ${va!.metadata!.name}`]!.annotations[NODE_ID] = stack.nodes.find((n) => n.name === shop.nodeName)!.instanceId;
    expect(after).toEqual(expected);

    expect(await registered()).toBe(false);
    expect(ec2Calls()).toBe(callsBefore);
    expect(await ec2State()).toEqual(disksBefore);
    expect(ec2Clients).toEqual([]);
    // The look just taken is the only EC2 call since (the test's own DescribeVolumes).
    const callsNow = ec2Calls();

    // What external-provisioner and external-attacher need, on every object of the driver.
    const volumes = (await stack.kube.core.listPersistentVolume()).items.filter((v) => v.spec?.csi?.driver === DRIVER);
    expect(volumes.length).toBeGreaterThanOrEqual(3);
    for (const v of volumes) {
      expect(v.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'], v.metadata?.name).toBe(DRIVER);
      if (v.spec?.persistentVolumeReclaimPolicy === 'Delete') expect(v.metadata?.finalizers, v.metadata?.name).toContain(PROVISIONER);
      expect(v.spec?.csi?.volumeHandle).toMatch(/^vol-[0-9a-f]+$/);
      expect(v.spec?.csi?.fsType).toBe('ext4');
      const keys = v.spec?.nodeAffinity?.required?.nodeSelectorTerms?.flatMap((t) => (t.matchExpressions ?? []).map((e) => e.key)) ?? [];
      expect(keys.some((k) => k === 'topology.ebs.csi.aws.com/zone' || k === 'topology.kubernetes.io/zone'), v.metadata?.name).toBe(true);
    }
    const attached = (await listAttachments(stack.kube)).filter((a) => a.spec.attacher === DRIVER && a.status?.attached);
    expect(attached.length).toBe(1);
    for (const a of attached) {
      expect(a.metadata?.finalizers).toContain(ATTACHER);
      expect(a.metadata?.annotations?.[NODE_ID]).toMatch(/^i-/);
      expect((await readVolume(stack.kube, a.spec.source.persistentVolumeName ?? '')).metadata?.finalizers).toContain(ATTACHER);
    }
    for (const pvc of (await stack.kube.core.listNamespacedPersistentVolumeClaim({ namespace: 'shop' })).items) {
      expect(pvc.metadata?.annotations?.['volume.kubernetes.io/storage-provisioner'], pvc.metadata?.name).toBe(DRIVER);
    }
    const everyKey = Object.values(after).flatMap((m) => [...m.finalizers, ...Object.keys(m.annotations)]);
    expect(everyKey.filter((k) => /(^|\.)volhook\.io\//.test(k))).toEqual([]);

    // Run again: nothing left to do, nothing registered.
    const again = await release('--apply', '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(json(again)).toMatchObject({ marks: [], held: [], registration: { status: 'not-registered' } });
    expect(json(again).findings.filter((f) => f.status !== 'report')).toEqual([]);
    expect(ec2Calls()).toBe(callsNow);
  }, 180_000);
});
