/**
 * The hand-over from the EBS CSI controller to volhook (issue 44, docs/deploy.md "Hand over from
 * the EBS CSI controller"), for real: the reference controller stack (aws-ebs-csi-driver v1.63.0
 * and its chart's sidecars, lib/local/peer) provisions and attaches disks on the real control
 * plane against the EC2 simulator, with volhook's forwarder not running; then the controller is
 * stopped (the node half — here the plane's node agents — and the cluster's snapshot-controller
 * stay), `npm run cluster -- adopt local --apply` tags its disks, and volhook's forwarder starts.
 * volhook then detaches, attaches, grows, snapshots and deletes those disks, alone: every EC2 call
 * after the controller stopped is volhook's (or adopt's CreateTags). The verdict is the
 * simulator's state at the end (leftBehind): nothing leaked, no call refused.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, EBS_CSI_BIN, readComponents } from '../../infra/tools/ebs-csi-build.js';
import type { AdoptionReport } from '../../lib/cli/adopt-report.js';
import type { Ec2SimStats } from '../../lib/local/ec2/index.js';
import { missingBinaries, startSnapshotController, type EbsCsiPeer } from '../../lib/local/peer/ebs-csi.js';
import { startPeerOn } from '../../lib/local/peer/peer-stack.js';
import type { PlaneProcess } from '../../lib/local/plane/processes.js';
import { startLocalStack, type RealLocalStack } from '../../lib/local/stack/index.js';
import { realPlaneInputs } from '../../tools/kube/inputs.js';
import { waitFor } from '../e2e/support/wait.js';
import { withoutGo } from '../real-plane/support.js';
import {
  attachments,
  claimsWithPods,
  cluster,
  createNamespace,
  deletePod,
  detachAndReattach,
  diskState,
  grow,
  kubeOf,
  leftBehind,
  MUTATIONS,
  NS,
  okSince,
  podRunning,
  warnings,
  type Kube,
} from './handover-support.js';

const CLAIMS = ['data-0', 'data-1'];
const SNAPSHOTS = { group: 'snapshot.storage.k8s.io', version: 'v1' } as const;

let dir: string;
let localDir: string;
let stack: RealLocalStack;
let peer: EbsCsiPeer | undefined;
let snapshotController: PlaneProcess | undefined;
let kube: Kube;
let rootVolumes: Set<string>;
let volumeIds: string[];
/** The simulator's counters when the controller had stopped: every call since is volhook's or adopt's. */
let handedOver: Ec2SimStats;

const sim = () => stack.simulator!;
const tagsOf = (volumeId: string) => Object.fromEntries((sim().volume(volumeId)?.tags ?? []).map((t) => [t.key, t.value]));

describe.skipIf(withoutGo !== undefined)('hand-over from the EBS CSI controller stack to volhook, on the real control plane', () => {
  beforeAll(async () => {
    if (withoutGo) return;
    if (missingBinaries(EBS_CSI_BIN).length > 0) await build(readComponents().components);
    dir = await mkdtemp(join(tmpdir(), 'volhook-handover-in-'));
    localDir = join(dir, 'local');
    const inputs = await realPlaneInputs((line) => console.log(line));
    // volhook registered and its forwarder configured, not running: the controller serves the cluster first.
    stack = await startLocalStack({
      ports: { backend: 0, ec2: 0, kube: 0 },
      ec2: { timeScale: 20 },
      localDir,
      forwarder: { port: 0, backoffInitialMs: 200, backoffMaxMs: 2_000 },
      forwarderStopped: true,
      kube: inputs,
    });
    rootVolumes = new Set(sim().volumes().map((v) => v.id));
    kube = kubeOf(stack);
    // The cluster's own snapshot-controller (EKS's add-on), which stays when the driver's controller goes.
    snapshotController = await startSnapshotController({ binDir: EBS_CSI_BIN, dir: join(dir, 'snapshot-controller'), kubeconfig: stack.kubeconfig });
    peer = await startPeerOn(stack, { binDir: EBS_CSI_BIN, dir: join(dir, 'ebs-csi'), snapshotController: false });
    await createNamespace(kube);
  }, 1_200_000);

  afterAll(async () => {
    await peer?.stop();
    await snapshotController?.stop();
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the controller: 2 WaitForFirstConsumer claims with pods -> Bound by the driver (its tags, none of volhook\'s), attached, Running', async () => {
    expect(stack.forwarder()).toBeUndefined();
    ({ volumeIds } = await claimsWithPods(kube, CLAIMS));
    expect(new Set(volumeIds).size).toBe(CLAIMS.length);
    for (const [i, id] of volumeIds.entries()) {
      const tags = tagsOf(id);
      expect(tags).toMatchObject({ 'ebs.csi.aws.com/cluster': 'true', 'kubernetes.io/created-for/pvc/name': CLAIMS[i], 'kubernetes.io/created-for/pvc/namespace': NS });
      expect(tags['kubernetes.io/cluster/local']).toBeUndefined();
      expect(tags['volhook.io/cluster']).toBeUndefined();
      expect(sim().volume(id)?.state).toBe('in-use');
    }
    expect(await attachments(kube)).toEqual(CLAIMS.map(() => expect.stringMatching(/^pvc-.* true$/)));
  });

  it('the controller stopped; `npm run cluster -- adopt local` -> a dry run lists both disks "tag", tags nothing; --apply -> both tagged for the cluster, exit 0; a dry run again -> both "adopted"', async () => {
    await peer!.stop();
    expect(peer!.processes.every((p) => p.done())).toBe(true);
    peer = undefined;
    handedOver = sim().getStats();
    const env = { VOLHOOK_LOCAL_DIR: localDir };

    const dry = await cluster(['adopt', 'local', '--json'], env);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = JSON.parse(dry.stdout) as AdoptionReport;
    expect(planned.disks.map((d) => [d.volumeId, d.status]).sort()).toEqual(volumeIds.map((id) => [id, 'tag']).sort());
    expect(tagsOf(volumeIds[0]!)['volhook.io/cluster']).toBeUndefined();

    const applied = await cluster(['adopt', 'local', '--apply', '--json'], env);
    expect(applied.code, applied.stderr).toBe(0);
    expect((JSON.parse(applied.stdout) as AdoptionReport).disks.map((d) => d.status)).toEqual(['tagged', 'tagged']);
    for (const id of volumeIds) {
      expect(tagsOf(id)).toMatchObject({ 'kubernetes.io/cluster/local': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'local', CSIVolumeName: expect.stringMatching(/^pvc-/) });
    }

    const again = await cluster(['adopt', 'local', '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as AdoptionReport).disks.map((d) => d.status)).toEqual(['adopted', 'adopted']);
    // adopt only tags: no disk was changed otherwise.
    expect(okSince(handedOver, sim().getStats(), MUTATIONS)).toEqual(Object.fromEntries(MUTATIONS.map((a) => [a, 0])));
  });

  it("volhook's forwarder started -> takes the attached disks as they are (no attach, detach or other change in EC2), the pods keep Running", async () => {
    await stack.restartForwarder();
    expect(stack.forwarder()).toBeDefined();
    // Its first sync has gone through every object: the cluster's report reached the backend.
    await waitFor(() => stack.reports.get(stack.clusterId), (r) => r !== undefined, { what: "the forwarder's first volume report", timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(okSince(handedOver, sim().getStats(), MUTATIONS)).toEqual(Object.fromEntries(MUTATIONS.map((a) => [a, 0])));
    expect(await attachments(kube)).toEqual(CLAIMS.map(() => expect.stringMatching(/ true$/)));
    for (const name of CLAIMS) await podRunning(kube, `user-${name}`);
  });

  it("volhook: data-1's pod deleted -> its disk detached (DetachVolume); a new pod on data-1 -> attached again (AttachVolume), Running", async () => {
    await detachAndReattach(kube, sim(), 'user-data-1', 'again-data-1', 'data-1', volumeIds[1]!, 'volhook');
  });

  it('volhook: data-0 grown from 4Gi to 8Gi while attached -> the disk modified (ModifyVolume), the claim at 8Gi', async () => {
    const before = sim().getStats();
    await grow(kube, sim(), 'data-0', volumeIds[0]!, 8);
    expect(okSince(before, sim().getStats(), ['ModifyVolume'])).toEqual({ ModifyVolume: 1 });
  });

  it('volhook: a VolumeSnapshot of data-0 -> ready, its EC2 snapshot tagged for the cluster; the VolumeSnapshot deleted -> the EC2 snapshot deleted', async () => {
    await kube.custom.createClusterCustomObject({
      ...SNAPSHOTS,
      plural: 'volumesnapshotclasses',
      body: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotClass', metadata: { name: 'handover' }, driver: 'ebs.csi.aws.com', deletionPolicy: 'Delete' },
    });
    await kube.custom.createNamespacedCustomObject({
      ...SNAPSHOTS,
      namespace: NS,
      plural: 'volumesnapshots',
      body: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', metadata: { name: 'data-0-snap' }, spec: { volumeSnapshotClassName: 'handover', source: { persistentVolumeClaimName: 'data-0' } } },
    });
    type VolumeSnapshot = { status?: { readyToUse?: boolean; boundVolumeSnapshotContentName?: string } };
    const ready = (await waitFor(
      () => kube.custom.getNamespacedCustomObject({ ...SNAPSHOTS, namespace: NS, plural: 'volumesnapshots', name: 'data-0-snap' }) as Promise<VolumeSnapshot>,
      (s) => s.status?.readyToUse === true,
      { what: 'the VolumeSnapshot ready', timeoutMs: 180_000, report: (s) => s?.status },
    )) as VolumeSnapshot;
    const content = (await kube.custom.getClusterCustomObject({ ...SNAPSHOTS, plural: 'volumesnapshotcontents', name: ready.status!.boundVolumeSnapshotContentName! })) as { status?: { snapshotHandle?: string } };
    const snapshotId = content.status!.snapshotHandle!;
    const snapshot = sim().snapshot(snapshotId);
    expect(snapshot?.volumeId).toBe(volumeIds[0]);
    expect(Object.fromEntries((snapshot?.tags ?? []).map((t) => [t.key, t.value]))).toMatchObject({ 'kubernetes.io/cluster/local': 'owned', 'volhook.io/cluster': 'local' });

    await kube.custom.deleteNamespacedCustomObject({ ...SNAPSHOTS, namespace: NS, plural: 'volumesnapshots', name: 'data-0-snap' });
    await waitFor(() => sim().snapshot(snapshotId), (s) => s === undefined, { what: `snapshot ${snapshotId} deleted in EC2`, timeoutMs: 120_000, report: (s) => s?.state });
  });

  it('volhook: pods and claims deleted -> every disk detached and deleted, no PV or VolumeAttachment left, no Warning Event; the simulator: nothing leaked, no call refused, the controller made no call since it stopped', async () => {
    for (const name of ['user-data-0', 'again-data-1']) await deletePod(kube, name);
    // Detached before the claims go: a Released PV still attached is retried with a Warning
    // VolumeFailedDelete ("still attached to node"), by external-provisioner as by volhook.
    await waitFor(() => attachments(kube), (list) => list.length === 0, { what: 'every VolumeAttachment gone', timeoutMs: 120_000 });
    for (const id of volumeIds) await diskState(sim(), id, 'available', `${id} detached`);
    for (const name of CLAIMS) await kube.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: NS });
    for (const id of volumeIds) await diskState(sim(), id, 'deleted', `${id} deleted by volhook`);
    await waitFor(async () => (await kube.core.listPersistentVolume()).items, (items) => items.length === 0, { what: 'the PVs gone', timeoutMs: 120_000 });
    expect(await attachments(kube)).toEqual([]);
    expect(leftBehind(sim(), rootVolumes)).toEqual([]);
    // Nothing along the way needed a person: no Warning on a claim, a PV or a VolumeAttachment.
    expect(await warnings(kube)).toEqual([]);
    // Since the hand-over: the detach and attach above and the two disks' final detach and delete, each once.
    expect(okSince(handedOver, sim().getStats(), MUTATIONS)).toEqual({ CreateVolume: 0, AttachVolume: 1, DetachVolume: 3, ModifyVolume: 1, DeleteVolume: 2, CreateSnapshot: 1, DeleteSnapshot: 1 });
  });
});

// Needs no Go: docs/deploy.md says which test runs each hand-over, and each names a file that exists.
describe("docs/deploy.md's hand-over sections", () => {
  const doc = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
  const section = (title: string) => {
    const start = doc.indexOf(`\n## ${title}`);
    expect(start, title).toBeGreaterThan(0);
    const end = doc.indexOf('\n## ', start + 1);
    return doc.slice(start, end < 0 ? undefined : end);
  };

  it('-> "Hand over" names test/peer/handover-in.test.ts, "Hand back" test/peer/handover-out.test.ts, both files there', () => {
    const named = { 'Hand over from the EBS CSI controller': 'test/peer/handover-in.test.ts', 'Hand back to the EBS CSI controller': 'test/peer/handover-out.test.ts' };
    for (const [title, file] of Object.entries(named)) {
      expect(section(title)).toContain(`\`${file}\``);
      expect(existsSync(new URL(`../../${file}`, import.meta.url)), file).toBe(true);
    }
    expect(section('Hand over from the EBS CSI controller')).not.toContain('handover-out');
  });
});
