/**
 * The reference EBS CSI controller stack as a peer (lib/local/peer): aws-ebs-csi-driver
 * v1.63.0 and its chart's sidecars, built by `npm run ebs-csi:build` (first, when missing),
 * against the real control plane and the EC2 simulator, with volhook's forwarder not running.
 * A handful of WaitForFirstConsumer claims with pods go through create, attach, detach and
 * delete; the verdict is the simulator's state at the end: nothing left behind, and no call
 * of the driver's key refused by the IAM model (AmazonEBSCSIDriverPolicy) — with a control
 * call the policy does refuse, so that the check is known to see refusals.
 */
import { CoreV1Api, KubeConfig, StorageV1Api, type V1Pod } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { CreateVolumeCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, EBS_CSI_BIN, readComponents } from '../../infra/tools/ebs-csi-build.js';
import { chartFlags, EBS_CSI_BINARIES, missingBinaries } from '../../lib/local/peer/ebs-csi.js';
import { EBS_CSI_DRIVER_KEY, startPeerStack, type PeerStack } from '../../lib/local/peer/peer-stack.js';
import { realPlaneInputs } from '../../tools/kube/inputs.js';
import { waitFor } from '../e2e/support/wait.js';
import { withoutGo } from './support.js';

const NS = 'peer';
const CLAIMS = 4;

let h: PeerStack;
let core: CoreV1Api;
let storage: StorageV1Api;
/** The nodes' root volumes, there before the scenario (launched with the instances). */
let rootVolumes: Set<string>;

const isRunning = (pod: V1Pod) => pod.status?.phase === 'Running' && (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

function pod(name: string, claimName: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: 'peer' } },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'app', image: 'busybox:1.36', command: ['sleep', 'infinity'], volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  };
}

/** Volumes made since the start, not yet deleted. */
const live = () => h.stack.simulator!.volumes().filter((v) => !rootVolumes.has(v.id) && v.state !== 'deleted');

describe.skipIf(withoutGo !== undefined)('the EBS CSI controller stack as a peer, on the real control plane', () => {
  beforeAll(async () => {
    if (withoutGo) return;
    const missing = missingBinaries(EBS_CSI_BIN);
    if (missing.length > 0) {
      console.log(`The EBS CSI stack is not built (${missing.join(', ')} missing); building it first (npm run ebs-csi:build).`);
      await build(readComponents().components);
    }
    const inputs = await realPlaneInputs((line) => console.log(line));
    h = await startPeerStack({ ports: { backend: 0, ec2: 0, kube: 0 }, ec2: { timeScale: 20 }, kube: inputs, binDir: EBS_CSI_BIN });
    const kc = new KubeConfig();
    kc.loadFromString(h.stack.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    storage = kc.makeApiClient(StorageV1Api);
    rootVolumes = new Set(h.stack.simulator!.volumes().map((v) => v.id));
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await waitFor(() => core.readNamespacedServiceAccount({ name: 'default', namespace: NS }), () => true, { what: `the default ServiceAccount of ${NS}` });
  }, 1_200_000);

  afterAll(async () => {
    await h?.stop();
  });

  it(`${CLAIMS} WaitForFirstConsumer claims with pods -> Bound by the driver (its tags), attached, Running; pods deleted -> detached; claims deleted -> every disk deleted, no call of the driver's key refused by AmazonEBSCSIDriverPolicy`, async () => {
    expect(h.stack.forwarder()).toBeUndefined();
    const names = Array.from({ length: CLAIMS }, (_, i) => `data-${i}`);
    for (const name of names) {
      await core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'gp3', resources: { requests: { storage: '4Gi' } } } },
      });
      await core.createNamespacedPod({ namespace: NS, body: pod(`user-${name}`, name) });
    }
    const claims = await waitFor(
      () => Promise.all(names.map((name) => core.readNamespacedPersistentVolumeClaim({ name, namespace: NS }))),
      (list) => list.every((c) => c.status?.phase === 'Bound'),
      { what: `${CLAIMS} claims Bound`, timeoutMs: 180_000, report: (list) => list?.map((c) => [c.metadata?.name, c.status?.phase]) },
    );
    const pvs = await Promise.all(claims.map((c) => core.readPersistentVolume({ name: c.spec!.volumeName! })));
    const volumeIds = pvs.map((pv) => pv.spec!.csi!.volumeHandle);
    expect(new Set(volumeIds).size).toBe(CLAIMS);
    // Made by the driver, as it tags (not volhook: its forwarder is not running).
    for (const [i, id] of volumeIds.entries()) {
      const tags = Object.fromEntries((h.stack.simulator!.volume(id)?.tags ?? []).map((t) => [t.key, t.value]));
      expect(tags).toMatchObject({ 'ebs.csi.aws.com/cluster': 'true', CSIVolumeName: pvs[i]!.metadata!.name, 'kubernetes.io/created-for/pvc/name': names[i], 'kubernetes.io/created-for/pvc/namespace': NS });
    }

    await waitFor(
      async () => (await storage.listVolumeAttachment()).items,
      (items) => items.length === CLAIMS && items.every((va) => va.status?.attached === true),
      { what: `${CLAIMS} VolumeAttachments attached`, timeoutMs: 180_000, report: (items) => items?.map((va) => [va.spec.source.persistentVolumeName, va.status?.attached, va.status?.attachError?.message]) },
    );
    await waitFor(
      async () => (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=peer' })).items,
      (pods) => pods.length === CLAIMS && pods.every(isRunning),
      { what: `${CLAIMS} pods Running`, timeoutMs: 120_000, report: (pods) => pods?.map((p) => [p.metadata?.name, p.status?.phase]) },
    );
    expect(volumeIds.map((id) => h.stack.simulator!.volume(id)?.state)).toEqual(volumeIds.map(() => 'in-use'));

    for (const name of names) await core.deleteNamespacedPod({ name: `user-${name}`, namespace: NS });
    await waitFor(async () => (await storage.listVolumeAttachment()).items, (items) => items.length === 0, { what: 'every VolumeAttachment gone', timeoutMs: 180_000 });
    await waitFor(() => volumeIds.map((id) => h.stack.simulator!.volume(id)?.state), (states) => states.every((s) => s === 'available'), {
      what: 'every disk detached (available) in EC2',
      timeoutMs: 60_000,
    });

    for (const name of names) await core.deleteNamespacedPersistentVolumeClaim({ name, namespace: NS });
    await waitFor(live, (volumes) => volumes.length === 0, { what: 'no disk left in EC2', timeoutMs: 180_000, report: (vs) => vs?.map((v) => [v.id, v.state, v.attachments.length]) });
    await waitFor(async () => (await core.listPersistentVolume()).items, (items) => items.length === 0, { what: 'the PVs gone', timeoutMs: 60_000 });

    // The simulator's verdict: nothing leaked, every driver call allowed, and the driver did the work.
    const sim = h.stack.simulator!;
    expect(sim.snapshots()).toEqual([]);
    // The nodes' root volumes, untouched: still there, each attached to its instance.
    expect(sim.volumes().filter((v) => rootVolumes.has(v.id)).map((v) => [v.state, v.attachments.length])).toEqual([...rootVolumes].map(() => ['in-use', 1]));
    const stats = sim.getStats();
    expect(stats.total.errors['UnauthorizedOperation'] ?? 0).toBe(0);
    expect(stats.total.errors['AuthFailure'] ?? 0).toBe(0);
    for (const action of ['CreateVolume', 'AttachVolume', 'DetachVolume', 'DeleteVolume']) {
      expect(stats.actions[action]?.ok ?? 0, action).toBeGreaterThanOrEqual(CLAIMS);
    }

    // The control: a call the policy refuses (CreateVolume without the cluster tag), signed with the driver's key, is seen refused.
    const asDriver = new EC2Client({ region: h.stack.region, endpoint: h.stack.urls.ec2, credentials: EBS_CSI_DRIVER_KEY, maxAttempts: 1 });
    try {
      const refused = await asDriver.send(new CreateVolumeCommand({ AvailabilityZone: h.stack.nodes[0]!.zone, Size: 1, VolumeType: 'gp3' })).then(
        () => 'allowed',
        (err: { name?: string }) => err.name,
      );
      expect(refused).toBe('UnauthorizedOperation');
    } finally {
      asDriver.destroy();
    }
    expect(sim.getStats().total.errors['UnauthorizedOperation']).toBe(1);
    expect(live()).toEqual([]);
  });
});

// Needs no Go: docs/real-plane.md's peer section says what the launcher passes.
describe("docs/real-plane.md's peer section", () => {
  const doc = readFileSync(new URL('../../docs/real-plane.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## The EBS CSI controller stack as a peer'));
  /** The section's bullets, whitespace folded: a flag broken over two lines still reads whole. */
  const bullets = section.split(/\n\s*- /).map((b) => b.replace(/\s+/g, ' '));

  it('-> every flag chartFlags gives each binary (but the socket and kubeconfig paths), in that binary\'s bullet; every version of tools/ebs-csi/components.json', () => {
    const flags = chartFlags('/S', '/K');
    for (const name of EBS_CSI_BINARIES) {
      const bullet = bullets.find((b) => b.startsWith(name === 'aws-ebs-csi-driver' ? 'the driver:' : `${name}`));
      expect(bullet, name).toBeDefined();
      for (const flag of flags[name].filter((f) => !f.includes('/S') && !f.includes('/K'))) {
        // The flags every sidecar shares are said once, in the sidecars' bullet.
        const shared = ['--v=2', '--leader-election=false'].includes(flag) && name !== 'aws-ebs-csi-driver' && name !== 'snapshot-controller';
        expect(shared ? section.replace(/\s+/g, ' ') : bullet, `${name} ${flag}`).toContain(flag);
      }
    }
    const components = JSON.parse(readFileSync(new URL('../../tools/ebs-csi/components.json', import.meta.url), 'utf8')) as { components: { version: string }[] };
    for (const c of components.components) expect(section).toContain(`**${c.version}**`);
  });
});
