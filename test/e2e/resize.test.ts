/**
 * Volume expansion and VolumeAttributesClass changes end to end over the local stack (real
 * HTTP: Kubernetes API, forwarder, backend, EC2 simulator), driven with kubectl and YAML as a
 * user would. The simulator runs 1,000× fast, so EC2's rolling 24 hours for four modifications
 * of a volume last 86.4 s here (one test shortens them further).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ec2SimStats } from '../../lib/local/ec2/index.js';
import { tagsOf, volumeById } from './support/ec2.js';
import { createNamespace, readClaim, readVolume } from './support/kube.js';
import { kubectlFor, podYaml, type Kubectl } from './support/kubectl.js';
import { claimEvents, claimYaml, classYaml, reasons, vacYaml, waitClaim, waitEvent } from './support/resize.js';
import { waitClaimBound, waitPodRunning, type ScenarioContext } from './support/scenarios.js';
import { STACK_START_MS } from './support/plane.js';
import { startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const TIME_SCALE = 1000;
/** The 6-hour wait EC2 had until 2026, as this stack's clock runs it. */
const OLD_COOLDOWN_MS = (6 * 60 * 60 * 1000) / TIME_SCALE;

let stack: E2eStack;
let ctx: ScenarioContext;
let kubectl: Kubectl;

beforeAll(async () => {
  ({ stack, ctx } = await startScenarioStack({ ec2: { timeScale: TIME_SCALE } }));
  kubectl = await kubectlFor(stack);
  await kubectl.create(classYaml('expand-wffc', { binding: 'WaitForFirstConsumer', expand: true }));
  await kubectl.create(classYaml('expand', { expand: true }));
  await kubectl.create(classYaml('fixed', {}));
  await kubectl.create(classYaml('magnetic', { type: 'standard', expand: true }));
  await kubectl.create(vacYaml('gp3-3000', { type: 'gp3', iops: '3000', throughput: '125' }));
  await kubectl.create(vacYaml('gp3-6000', { type: 'gp3', iops: '6000', throughput: '250' }));
  await kubectl.create(vacYaml('team-tag', { tagSpecification_1: 'team=storage' }));
  await kubectl.create(vacYaml('io2-too-many', { type: 'io2', iops: '50000' }));
  await kubectl.create(vacYaml('gp2-throughput', { type: 'gp2', throughput: '200' }));
}, STACK_START_MS);
afterAll(async () => {
  await stack?.stop();
  await kubectl?.close();
});

const stats = (): Ec2SimStats => stack.simulator!.getStats();
const okCalls = (s: Ec2SimStats, action: string) => s.actions[action]?.ok ?? 0;
const errorsOf = (s: Ec2SimStats, action: string) => s.actions[action]?.errors ?? {};
/** EC2 calls made between two stats snapshots, by action (only those that changed). */
function callsBetween(before: Ec2SimStats, after: Ec2SimStats): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [action, s] of Object.entries(after.actions)) {
    const n = s.calls - (before.actions[action]?.calls ?? 0);
    if (n > 0) out[action] = n;
  }
  return out;
}

async function volumeOf(ns: string, claim: string) {
  const pvc = await waitClaimBound(ctx, ns, claim);
  const pv = await readVolume(stack.kube, pvc.spec?.volumeName ?? '');
  return { pvc, pv, volumeId: pv.spec?.csi?.volumeHandle ?? '' };
}

describe('volume expansion over the local stack', () => {
  it('Filesystem claim with a pod, 4Gi -> 8Gi: one ModifyVolume, EC2 8 GiB, PV 8Gi, claim capacity 8Gi after the node grew the filesystem, Events in order', async () => {
    const ns = 'fs';
    await createNamespace(stack.kube, ns);
    await kubectl.create(claimYaml(ns, 'data', { storageClassName: 'expand-wffc', size: '4Gi' }));
    await kubectl.create(podYaml(ns, 'app', 'data'));
    await waitPodRunning(ctx, ns, 'app');
    const { volumeId, pv } = await volumeOf(ns, 'data');
    const before = stats();

    await kubectl.patch('pvc', ns, 'data', { spec: { resources: { requests: { storage: '8Gi' } } } });

    const done = await waitClaim(stack.kube, ns, 'data', 'capacity 8Gi, no resize status left', (c) => c.status?.capacity?.storage === '8Gi' && !c.status?.allocatedResourceStatuses?.storage);
    expect(done.status?.allocatedResources?.storage).toBe('8Gi');
    expect(done.status?.conditions ?? []).toEqual([]);
    expect((await volumeById(stack.ec2, volumeId))?.Size).toBe(8);
    expect((await readVolume(stack.kube, pv.metadata?.name ?? '')).spec?.capacity?.storage).toBe('8Gi');
    expect(okCalls(stats(), 'ModifyVolume') - okCalls(before, 'ModifyVolume')).toBe(1);
    const events = await claimEvents(stack.kube, ns, 'data');
    const resize = reasons(events).filter((r) => ['Resizing', 'FileSystemResizeRequired', 'FileSystemResizeSuccessful', 'VolumeResizeFailed'].includes(r));
    expect(resize).toEqual(['Resizing', 'FileSystemResizeRequired', 'FileSystemResizeSuccessful']);
    expect(events.find((e) => e.reason === 'Resizing')?.message).toBe(`External resizer is resizing volume ${pv.metadata?.name}`);
  }, 120_000);

  it('Block claim, 4Gi -> 6Gi: capacity set by the controller side, no node expansion', async () => {
    const ns = 'block';
    await createNamespace(stack.kube, ns);
    await kubectl.create(claimYaml(ns, 'raw', { storageClassName: 'expand', size: '4Gi', volumeMode: 'Block' }));
    const { volumeId } = await volumeOf(ns, 'raw');

    await kubectl.patch('pvc', ns, 'raw', { spec: { resources: { requests: { storage: '6Gi' } } } });

    const done = await waitClaim(stack.kube, ns, 'raw', 'capacity 6Gi', (c) => c.status?.capacity?.storage === '6Gi');
    expect(done.status?.allocatedResourceStatuses ?? {}).toEqual({});
    expect((await volumeById(stack.ec2, volumeId))?.Size).toBe(6);
    const resize = reasons(await claimEvents(stack.kube, ns, 'raw')).filter((r) => /Resiz/.test(r));
    expect(resize).toEqual(['Resizing', 'VolumeResizeSuccessful']);
  }, 120_000);
});

describe('VolumeAttributesClass over the local stack', () => {
  it('claim created with gp3-3000, changed to gp3-6000 -> one ModifyVolume with IOPS and throughput, EC2 6000/250, claim reports the new class', async () => {
    const ns = 'vac';
    await createNamespace(stack.kube, ns);
    await kubectl.create(claimYaml(ns, 'db', { storageClassName: 'expand', size: '20Gi', vac: 'gp3-3000' }));
    const { pvc, pv, volumeId } = await volumeOf(ns, 'db');
    expect(pv.spec?.volumeAttributesClassName).toBe('gp3-3000');
    expect(pvc.status?.currentVolumeAttributesClassName).toBe('gp3-3000');
    const created = await volumeById(stack.ec2, volumeId);
    expect([created?.Iops, created?.Throughput]).toEqual([3000, 125]);
    const before = stats();

    await kubectl.patch('pvc', ns, 'db', { spec: { volumeAttributesClassName: 'gp3-6000' } });

    const done = await waitClaim(stack.kube, ns, 'db', 'current class gp3-6000', (c) => c.status?.currentVolumeAttributesClassName === 'gp3-6000');
    expect(done.status?.modifyVolumeStatus).toBeUndefined();
    const modified = await volumeById(stack.ec2, volumeId);
    expect([modified?.Iops, modified?.Throughput, modified?.Size]).toEqual([6000, 250, 20]);
    expect(okCalls(stats(), 'ModifyVolume') - okCalls(before, 'ModifyVolume')).toBe(1);
    expect((await readVolume(stack.kube, pv.metadata?.name ?? '')).spec?.volumeAttributesClassName).toBe('gp3-6000');
    expect(reasons(await claimEvents(stack.kube, ns, 'db')).filter((r) => r.startsWith('VolumeModify'))).toEqual(['VolumeModify', 'VolumeModifySuccessful']);
  }, 120_000);

  it('a class that only adds a tag -> CreateTags, no ModifyVolume, the tag on the disk and the class on the claim', async () => {
    const ns = 'vac-tag';
    await createNamespace(stack.kube, ns);
    await kubectl.create(claimYaml(ns, 'logs', { storageClassName: 'expand', size: '4Gi' }));
    const { volumeId } = await volumeOf(ns, 'logs');
    const before = stats();

    await kubectl.patch('pvc', ns, 'logs', { spec: { volumeAttributesClassName: 'team-tag' } });

    await waitClaim(stack.kube, ns, 'logs', 'current class team-tag', (c) => c.status?.currentVolumeAttributesClassName === 'team-tag');
    expect(tagsOf(await volumeById(stack.ec2, volumeId)).team).toBe('storage');
    const calls = callsBetween(before, stats());
    expect(calls.ModifyVolume ?? 0).toBe(0);
    expect(calls.CreateTags).toBe(1);
  }, 120_000);

  it('two expansions of one claim 10 minutes apart -> both ModifyVolume accepted once the first is completed, no refusal, no 6-hour wait', async () => {
    const ns = 'twice';
    await createNamespace(stack.kube, ns);
    await kubectl.create(claimYaml(ns, 'db', { storageClassName: 'expand', size: '4Gi', volumeMode: 'Block' }));
    const { volumeId } = await volumeOf(ns, 'db');
    const before = stats();

    await kubectl.patch('pvc', ns, 'db', { spec: { resources: { requests: { storage: '6Gi' } } } });
    await waitClaim(stack.kube, ns, 'db', 'capacity 6Gi', (c) => c.status?.capacity?.storage === '6Gi');
    await new Promise((resolve) => setTimeout(resolve, (10 * 60 * 1000) / TIME_SCALE));
    const secondAt = Date.now();
    await kubectl.patch('pvc', ns, 'db', { spec: { resources: { requests: { storage: '8Gi' } } } });
    const done = await waitClaim(stack.kube, ns, 'db', 'capacity 8Gi', (c) => c.status?.capacity?.storage === '8Gi');

    expect(Date.now() - secondAt).toBeLessThan(OLD_COOLDOWN_MS);
    expect(done.status?.conditions ?? []).toEqual([]);
    expect((await volumeById(stack.ec2, volumeId))?.Size).toBe(8);
    const after = stats();
    expect(okCalls(after, 'ModifyVolume') - okCalls(before, 'ModifyVolume')).toBe(2);
    expect((errorsOf(after, 'ModifyVolume').VolumeModificationRateExceeded ?? 0) - (errorsOf(before, 'ModifyVolume').VolumeModificationRateExceeded ?? 0)).toBe(0);
    expect(reasons(await claimEvents(stack.kube, ns, 'db')).filter((r) => r === 'VolumeResizeFailed')).toEqual([]);
  }, 120_000);

  it('a fifth modification within the rolling window -> EC2\'s refusal as a Warning naming when, the resize still in progress; at that time one more ModifyVolume, no error loop', async () => {
    // EC2's 24 hours shortened to 60 s of this stack's clock (four expansions take about 30 s).
    const windowMs = 60_000;
    stack.simulator!.configure({ modificationWindowMs: windowMs * TIME_SCALE });
    try {
      const ns = 'fifth';
      await createNamespace(stack.kube, ns);
      await kubectl.create(claimYaml(ns, 'db', { storageClassName: 'expand', size: '4Gi', volumeMode: 'Block' }));
      const { volumeId } = await volumeOf(ns, 'db');
      const before = stats();
      const firstAt = Date.now();
      for (const gib of [5, 6, 7, 8]) {
        await kubectl.patch('pvc', ns, 'db', { spec: { resources: { requests: { storage: `${gib}Gi` } } } });
        await waitClaim(stack.kube, ns, 'db', `capacity ${gib}Gi`, (c) => c.status?.capacity?.storage === `${gib}Gi`);
      }
      await kubectl.patch('pvc', ns, 'db', { spec: { resources: { requests: { storage: '9Gi' } } } });

      const event = await waitEvent(stack.kube, ns, 'db', 'VolumeResizeFailed');
      expect(event.type).toBe('Warning');
      expect(event.message).toMatch(/VolumeModificationRateExceeded: .*limit of four modifications in a rolling 24-hour period\. You can modify it again after \d{4}-\d\d-\d\dT[\d:.]+Z/);
      const nextAt = Date.parse(/again after (\S+Z)/.exec(event.message ?? '')![1]!);
      expect(nextAt).toBeGreaterThan(Date.now());
      const waiting = await waitClaim(stack.kube, ns, 'db', 'the resize waiting', (c) => c.status?.allocatedResources?.storage === '9Gi');
      expect(waiting.status?.allocatedResourceStatuses).toEqual({ storage: 'ControllerResizeInProgress' });
      expect(waiting.status?.capacity?.storage).toBe('8Gi');

      const done = await waitClaim(stack.kube, ns, 'db', 'capacity 9Gi', (c) => c.status?.capacity?.storage === '9Gi', windowMs + 30_000);
      expect(Date.now()).toBeGreaterThanOrEqual(nextAt);
      expect(Date.now() - firstAt).toBeGreaterThanOrEqual(windowMs);
      expect(done.status?.conditions ?? []).toEqual([]);
      expect((await volumeById(stack.ec2, volumeId))?.Size).toBe(9);
      const after = stats();
      expect(okCalls(after, 'ModifyVolume') - okCalls(before, 'ModifyVolume')).toBe(5);
      // The time is known, so EC2 is not asked again before it: one refusal (two if an item raced it).
      const refusals = (errorsOf(after, 'ModifyVolume').VolumeModificationRateExceeded ?? 0) - (errorsOf(before, 'ModifyVolume').VolumeModificationRateExceeded ?? 0);
      expect(refusals).toBeGreaterThanOrEqual(1);
      expect(refusals).toBeLessThanOrEqual(2);
      console.log(`five expansions in one window: EC2 calls ${JSON.stringify(callsBetween(before, after))}`);
    } finally {
      stack.simulator!.configure({ modificationWindowMs: 24 * 60 * 60 * 1000 });
    }
  }, 200_000);
});

describe('refusals: a Warning Event naming the reason (or the API server\'s own refusal), no EC2 call', () => {
  /**
   * The stats once EC2 has seen no call for a second: what earlier scenarios set going (a
   * claim just bound, a resync) is over, so the calls counted next are the change's own.
   */
  async function quietStats(): Promise<Ec2SimStats> {
    let last = stats();
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
      await sleep(1_000);
      const now = stats();
      if (now.total.calls === last.total.calls) return now;
      last = now;
    }
    throw new Error(`EC2 still called every second after 30 s: ${JSON.stringify(last.actions)}`);
  }

  /** Runs `change` and waits for `reason` on the claim; the EC2 calls made meanwhile. */
  async function refused(ns: string, claim: string, change: () => Promise<unknown>, reason: string, message: RegExp) {
    const before = await quietStats();
    await change();
    const event = await waitEvent(stack.kube, ns, claim, reason);
    expect(event.type).toBe('Warning');
    expect(event.message).toMatch(message);
    const calls = callsBetween(before, stats());
    for (const action of ['ModifyVolume', 'DescribeVolumesModifications', 'CreateTags', 'DeleteTags', 'DescribeVolumes']) expect(calls[action] ?? 0, action).toBe(0);
  }

  /** The API server refuses `change` with `message`: the claim keeps its size, no Event of a resize, no EC2 call. */
  async function refusedByApiServer(ns: string, claim: string, change: () => Promise<unknown>, message: RegExp) {
    const before = await quietStats();
    await expect(change()).rejects.toThrow(message);
    await sleep(2_000);
    const pvc = await readClaim(stack.kube, ns, claim);
    expect(pvc.spec?.resources?.requests?.storage).toBe('4Gi');
    expect(reasons(await claimEvents(stack.kube, ns, claim)).filter((r) => /Resiz/.test(r))).toEqual([]);
    expect(callsBetween(before, stats())).toEqual({});
  }

  it('shrinking 4Gi -> 2Gi -> refused by the API server (422: not below status.capacity), no Event, no EC2 call', async () => {
    const ns = 'shrink';
    await createNamespace(stack.kube, ns);
    await kubectl.create(claimYaml(ns, 'data', { storageClassName: 'expand', size: '4Gi' }));
    await volumeOf(ns, 'data');
    await refusedByApiServer(ns, 'data', () => kubectl.patch('pvc', ns, 'data', { spec: { resources: { requests: { storage: '2Gi' } } } }), /spec\.resources\.requests\.storage: Forbidden: field can not be less than status\.capacity/);
  }, 90_000);

  it('a class without allowVolumeExpansion -> refused by the API server (403: the resize admission), no Event, no EC2 call', async () => {
    const ns = 'fixed';
    await createNamespace(stack.kube, ns);
    await kubectl.create(claimYaml(ns, 'data', { storageClassName: 'fixed', size: '4Gi' }));
    await volumeOf(ns, 'data');
    await refusedByApiServer(ns, 'data', () => kubectl.patch('pvc', ns, 'data', { spec: { resources: { requests: { storage: '8Gi' } } } }), /persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize/);
  }, 90_000);

  it('a size over the type maximum (standard, 2000Gi) -> VolumeResizeFailed, claim ControllerResizeInfeasible', async () => {
    const ns = 'too-big';
    await createNamespace(stack.kube, ns);
    await kubectl.create(claimYaml(ns, 'data', { storageClassName: 'magnetic', size: '4Gi' }));
    await volumeOf(ns, 'data');
    await refused(ns, 'data', () => kubectl.patch('pvc', ns, 'data', { spec: { resources: { requests: { storage: '2000Gi' } } } }), 'VolumeResizeFailed', /a standard volume is at most 1024 GiB/);
    const pvc = await waitClaim(stack.kube, ns, 'data', 'ControllerResizeInfeasible', (c) => c.status?.allocatedResourceStatuses?.storage === 'ControllerResizeInfeasible');
    expect(pvc.status?.conditions?.find((c) => c.type === 'ControllerResizeError')?.message).toMatch(/at most 1024 GiB/);
  }, 90_000);

  it('a claim bound to another driver\'s PV -> VolumeResizeFailed "not an EBS volume of ebs.csi.aws.com"', async () => {
    const ns = 'foreign';
    await createNamespace(stack.kube, ns);
    await kubectl.create(`apiVersion: v1
kind: PersistentVolume
metadata:
  name: foreign-efs
spec:
  capacity: { storage: 4Gi }
  accessModes: [ReadWriteOnce]
  storageClassName: expand
  persistentVolumeReclaimPolicy: Retain
  claimRef: { namespace: ${ns}, name: data }
  csi: { driver: efs.csi.aws.com, volumeHandle: fs-0123456789abcdef0 }
`);
    // Bound from both sides (the claim names the PV): a claim only the PV's claimRef names is
    // Pending until the PV controller binds it, and with this annotation a provisioner may start
    // making it a disk meanwhile (external-provisioner would too) — a DescribeVolumes that could
    // land in the window below, which counts the resize's calls.
    await kubectl.create(claimYaml(ns, 'data', { storageClassName: 'expand', size: '4Gi', volumeName: 'foreign-efs', annotations: { 'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com' } }));
    await waitClaimBound(ctx, ns, 'data');
    await refused(ns, 'data', () => kubectl.patch('pvc', ns, 'data', { spec: { resources: { requests: { storage: '8Gi' } } } }), 'VolumeResizeFailed', /foreign-efs", which is not an EBS volume of ebs\.csi\.aws\.com/);
  }, 90_000);

  it.each([
    ['io2-too-many', /50000 IOPS is more than 1000 IOPS per GiB allows for 4 GiB of io2/],
    ['gp2-throughput', /volume type gp2 has no throughput setting/],
  ])('VolumeAttributesClass %s -> Infeasible with the reason, VolumeModifyFailed', async (vac, message) => {
    const ns = `bad-${vac}`;
    await createNamespace(stack.kube, ns);
    await kubectl.create(claimYaml(ns, 'data', { storageClassName: 'expand', size: '4Gi' }));
    await volumeOf(ns, 'data');
    await refused(ns, 'data', () => kubectl.patch('pvc', ns, 'data', { spec: { volumeAttributesClassName: vac } }), 'VolumeModifyFailed', message);
    const pvc = await waitClaim(stack.kube, ns, 'data', 'Infeasible', (c) => c.status?.modifyVolumeStatus?.status === 'Infeasible');
    expect(pvc.status?.modifyVolumeStatus?.targetVolumeAttributesClassName).toBe(vac);
    expect(pvc.status?.conditions?.find((c) => c.type === 'ModifyVolumeError')?.message).toMatch(message);
  }, 90_000);
});

describe('the claims keep converging', () => {
  it('every claim of the suite is Bound and none is left waiting on the forwarder', async () => {
    const claims = await waitFor(
      async () => (await stack.kube.core.listPersistentVolumeClaimForAllNamespaces()).items,
      (items) => items.every((c) => c.status?.phase === 'Bound'),
      { what: 'every claim Bound', report: (items) => items.map((c) => [c.metadata?.namespace, c.metadata?.name, c.status?.phase]) },
    );
    expect(claims.length).toBeGreaterThan(5);
  });
});
