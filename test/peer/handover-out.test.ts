/**
 * The hand-back from volhook to the EBS CSI controller (issue 44, docs/deploy.md "Hand back to
 * the EBS CSI controller"), for real: volhook provisions and attaches disks on the real control
 * plane against the EC2 simulator; its forwarder is stopped and `npm run cluster -- release
 * --apply` removes its marks and its registration, with no EC2 call; then the reference
 * controller stack (aws-ebs-csi-driver v1.63.0 and its chart's sidecars, lib/local/peer) starts
 * with a key the simulator holds to AmazonEBSCSIDriverPolicy, takes the disks where volhook left
 * them, and detaches, attaches, grows and deletes them, alone: every EC2 call after the release
 * is the driver's. The verdict is the simulator's state at the end (leftBehind): nothing leaked,
 * no call of the driver refused by its managed policy.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateVolumeCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, EBS_CSI_BIN, readComponents } from '../../infra/tools/ebs-csi-build.js';
import type { ReleaseReport } from '../../lib/cli/index.js';
import type { Ec2SimStats } from '../../lib/local/ec2/index.js';
import { missingBinaries, type EbsCsiPeer } from '../../lib/local/peer/ebs-csi.js';
import { EBS_CSI_DRIVER_KEY, startPeerOn } from '../../lib/local/peer/peer-stack.js';
import { localPaths, startLocalStack, type RealLocalStack } from '../../lib/local/stack/index.js';
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
  type CliRun,
  type Kube,
} from './handover-support.js';

const CLAIMS = ['data-0', 'data-1'];
const NONE = Object.fromEntries(MUTATIONS.map((a) => [a, 0]));

let dir: string;
let stack: RealLocalStack;
let peer: EbsCsiPeer | undefined;
let kube: Kube;
let rootVolumes: Set<string>;
let volumeIds: string[];
/** The simulator's counters when volhook had left: every call since is the driver's. */
let released: Ec2SimStats;

const sim = () => stack.simulator!;
const tagsOf = (volumeId: string) => Object.fromEntries((sim().volume(volumeId)?.tags ?? []).map((t) => [t.key, t.value]));

/**
 * `npm run cluster -- release local`, with the stack's registry file and the plane's
 * administrator kubeconfig. The backend's record of when it last heard from the cluster (which
 * --apply waits 600 s past) is given as an empty report directory, a backend that heard nothing:
 * that refusal and its dates are test/cli/release-backend-heard.test.ts's and test/e2e/release.test.ts's.
 */
async function release(...options: string[]): Promise<CliRun> {
  const registry = localPaths(join(dir, 'local')).registryFile;
  return cluster(['release', 'local', '--file', registry, '--kubeconfig', stack.kubeconfigFile!, '--reports-dir', join(dir, 'quiet-backend'), '--json', ...options]);
}

const report = (run: CliRun) => JSON.parse(run.stdout) as ReleaseReport;

async function registered(): Promise<boolean> {
  const file = JSON.parse(await readFile(localPaths(join(dir, 'local')).registryFile, 'utf8')) as { clusters: Record<string, unknown> };
  return Object.hasOwn(file.clusters, stack.clusterId);
}

describe.skipIf(withoutGo !== undefined)('hand-back from volhook to the EBS CSI controller stack, on the real control plane', () => {
  beforeAll(async () => {
    if (withoutGo) return;
    if (missingBinaries(EBS_CSI_BIN).length > 0) await build(readComponents().components);
    dir = await mkdtemp(join(tmpdir(), 'volhook-handover-out-'));
    const inputs = await realPlaneInputs((line) => console.log(line));
    stack = await startLocalStack({
      ports: { backend: 0, ec2: 0, kube: 0 },
      ec2: { timeScale: 20 },
      localDir: join(dir, 'local'),
      // As the chart runs it: leader election on its Lease, which release reads (short timings).
      forwarder: { port: 0, backoffInitialMs: 200, backoffMaxMs: 2_000, leaderElect: true, leaseNamespace: 'volhook-system', leaseDurationSeconds: 2, renewDeadlineSeconds: 1, retryPeriodSeconds: 0.25 },
      kube: inputs,
    });
    rootVolumes = new Set(sim().volumes().map((v) => v.id));
    kube = kubeOf(stack);
    await createNamespace(kube);
  }, 1_200_000);

  afterAll(async () => {
    await peer?.stop();
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("volhook: 2 WaitForFirstConsumer claims with pods -> Bound by volhook (its tags), attached, Running", async () => {
    ({ volumeIds } = await claimsWithPods(kube, CLAIMS));
    expect(new Set(volumeIds).size).toBe(CLAIMS.length);
    for (const id of volumeIds) {
      expect(tagsOf(id)).toMatchObject({ 'kubernetes.io/cluster/local': 'owned', 'volhook.io/cluster': 'local', 'ebs.csi.aws.com/cluster': 'true', CSIVolumeName: expect.stringMatching(/^pvc-/) });
      expect(sim().volume(id)?.state).toBe('in-use');
    }
    expect(await attachments(kube)).toEqual(CLAIMS.map(() => expect.stringMatching(/^pvc-.* true$/)));
  });

  it('`npm run cluster -- release local`: the forwarder running -> refused, exit 1; stopped -> a dry run would deregister, exit 0; --apply -> the registration removed, exit 0, no EC2 call', async () => {
    const refused = await release();
    expect(refused.code).toBe(1);
    expect(report(refused).refusals.join('\n')).toMatch(/Lease volhook-system\/volhook-forwarder is held by .*a forwarder may be running/);

    await stack.stopForwarder();
    released = sim().getStats();
    await sleep(2_500); // the released Lease (2 s) is past, by the API server's second-grained Date too
    const dry = await release();
    expect(dry.code, dry.stderr).toBe(0);
    expect(report(dry)).toMatchObject({ applied: false, held: [], refusals: [], registration: { status: 'remove' } });

    const applied = await release('--apply');
    expect(applied.code, applied.stderr).toBe(0);
    expect(report(applied)).toMatchObject({ applied: true, refusals: [], registration: { status: 'removed' } });
    expect(await registered()).toBe(false);
    expect(okSince(released, sim().getStats(), MUTATIONS)).toEqual(NONE);
  });

  it("the driver's controller started (AmazonEBSCSIDriverPolicy) -> takes the attached disks as they are (no attach, detach or other change in EC2), the pods keep Running", async () => {
    peer = await startPeerOn(stack, { binDir: EBS_CSI_BIN, dir: join(dir, 'ebs-csi'), snapshotController: false });
    await sleep(10_000);
    expect(peer.processes.filter((p) => p.done()).map((p) => p.name)).toEqual([]);
    expect(okSince(released, sim().getStats(), MUTATIONS)).toEqual(NONE);
    expect(await attachments(kube)).toEqual(CLAIMS.map(() => expect.stringMatching(/ true$/)));
    for (const name of CLAIMS) await podRunning(kube, `user-${name}`);
  });

  it("the driver: data-1's pod deleted -> its disk detached (DetachVolume); a new pod on data-1 -> attached again (AttachVolume), Running", async () => {
    await detachAndReattach(kube, sim(), 'user-data-1', 'again-data-1', 'data-1', volumeIds[1]!, 'the driver');
  });

  it('the driver: data-0 grown from 4Gi to 8Gi while attached -> the disk modified (ModifyVolume), the claim at 8Gi', async () => {
    const before = sim().getStats();
    await grow(kube, sim(), 'data-0', volumeIds[0]!, 8);
    expect(okSince(before, sim().getStats(), ['ModifyVolume'])).toEqual({ ModifyVolume: 1 });
  });

  it("the driver: pods and claims deleted -> every disk detached and deleted, no PV or VolumeAttachment left, no Warning Event; the simulator: nothing leaked, no call of the driver's key refused by its managed policy (a call it refuses, the control, is seen)", async () => {
    for (const name of ['user-data-0', 'again-data-1']) await deletePod(kube, name);
    // Detached before the claims go: a Released PV still attached is retried with a Warning
    // VolumeFailedDelete ("still attached to node"), by external-provisioner as by volhook.
    await waitFor(() => attachments(kube), (list) => list.length === 0, { what: 'every VolumeAttachment gone', timeoutMs: 120_000 });
    for (const id of volumeIds) await diskState(sim(), id, 'available', `${id} detached`);
    for (const name of CLAIMS) await kube.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: NS });
    for (const id of volumeIds) await diskState(sim(), id, 'deleted', `${id} deleted by the driver`);
    await waitFor(async () => (await kube.core.listPersistentVolume()).items, (items) => items.length === 0, { what: 'the PVs gone', timeoutMs: 120_000 });
    expect(await attachments(kube)).toEqual([]);
    expect(leftBehind(sim(), rootVolumes)).toEqual([]);
    // Nothing along the way needed a person: no Warning on a claim, a PV or a VolumeAttachment.
    expect(await warnings(kube)).toEqual([]);
    // Since the release, the driver's alone: the detach and attach above, the two disks' final
    // detach and delete — DeleteVolume at least once a disk: the reference stack has been seen
    // to call it a second time for a disk still deleting, which EC2 answers as done.
    const since = okSince(released, sim().getStats(), MUTATIONS);
    expect({ ...since, DeleteVolume: Math.min(since.DeleteVolume!, 2) }).toEqual({ CreateVolume: 0, AttachVolume: 1, DetachVolume: 3, ModifyVolume: 1, DeleteVolume: 2, CreateSnapshot: 0, DeleteSnapshot: 0 });

    // The control: a call the driver's policy refuses (CreateVolume without the cluster tag), signed with its key, is seen.
    const asDriver = new EC2Client({ region: stack.region, endpoint: stack.urls.ec2, credentials: EBS_CSI_DRIVER_KEY, maxAttempts: 1 });
    try {
      const answer = await asDriver.send(new CreateVolumeCommand({ AvailabilityZone: stack.nodes[0]!.zone, Size: 1, VolumeType: 'gp3' })).then(
        () => 'allowed',
        (err: { name?: string }) => err.name,
      );
      expect(answer).toBe('UnauthorizedOperation');
    } finally {
      asDriver.destroy();
    }
    expect(leftBehind(sim(), rootVolumes)).toEqual(['1 call(s) refused UnauthorizedOperation']);
  });
});
