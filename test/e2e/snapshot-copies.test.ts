/**
 * Cross-Region snapshot copies (a VolumeSnapshotClass's copyToRegion) end to end over the local
 * stack: real HTTP to the Kubernetes API, forwarder, backend and an EC2 simulator holding three
 * Regions behind one endpoint (each call served in the Region its SigV4 scope names). The
 * deployment's EC2 role is held to an account guard rail that denies CopySnapshot outside
 * us-east-1 and us-west-2, as a service control policy would.
 */
import { DescribeSnapshotsCommand, EC2Client, type Snapshot } from '@aws-sdk/client-ec2';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNAPSHOT_COPY_ANNOTATION, snapshotCopyOf } from '../../lib/contract/index.js';
import { auditCli, clusterCli, freshReport } from './support/audit.js';
import { tagsOf } from './support/ec2.js';
import { eventsFor } from './support/kube.js';
import { claimYaml, kubectlFor, type Kubectl } from './support/kubectl.js';
import { STACK_START_MS } from './support/plane.js';
import { waitClaimBound, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

const ALLOWED = 'us-west-2';
const DENIED = 'eu-west-1';

let stack: E2eStack;
let ctx: ScenarioContext;
let kubectl: Kubectl;
let localDir: string;
const regional = new Map<string, EC2Client>();

beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), 'volhook-copies-'));
  ({ stack, ctx } = await startScenarioStack({
    immediateClass: true,
    localDir,
    ec2: { timeScale: 400, regions: [ALLOWED, DENIED] },
    ec2RoleGuardRails: [
      {
        name: 'allowed-regions',
        document: {
          Version: '2012-10-17',
          Statement: [{ Effect: 'Deny', Action: 'ec2:CopySnapshot', Resource: '*', Condition: { StringNotEquals: { 'aws:RequestedRegion': ['us-east-1', ALLOWED] } } }],
        },
      },
    ],
  }));
  kubectl = await kubectlFor(stack);
}, STACK_START_MS);
afterAll(async () => {
  for (const c of regional.values()) c.destroy();
  await stack?.stop();
  await kubectl?.close();
  if (localDir) await rm(localDir, { recursive: true, force: true });
});

/** The operator's EC2 client of `region`, at the stack's one endpoint (it signs for that Region). */
function ec2In(region: string): EC2Client {
  let c = regional.get(region);
  if (!c) {
    c = new EC2Client({ region, endpoint: stack.urls.ec2, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 3 });
    regional.set(region, c);
  }
  return c;
}

/** This cluster's snapshots in `region`. */
async function clusterSnapshotsIn(region: string): Promise<Snapshot[]> {
  const { Snapshots } = await ec2In(region).send(new DescribeSnapshotsCommand({ OwnerIds: ['self'], Filters: [{ Name: `tag:kubernetes.io/cluster/${stack.clusterId}`, Values: ['owned'] }] }));
  return Snapshots ?? [];
}

const getJson = async <T>(...args: string[]): Promise<T> => JSON.parse(await kubectl('get', ...args, '-o', 'json')) as T;

interface ContentJson {
  metadata: { name: string; annotations?: Record<string, string> };
  status?: { snapshotHandle?: string; readyToUse?: boolean };
}

const classYaml = (name: string, policy: 'Delete' | 'Retain', region: string) => `apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata: { name: ${name} }
driver: ebs.csi.aws.com
deletionPolicy: ${policy}
parameters:
  copyToRegion: ${region}
  tagSpecification_1: "backup={{ .VolumeSnapshotNamespace }}/{{ .VolumeSnapshotName }}"
`;


const snapshotYaml = (ns: string, name: string, className: string) => `apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: { name: ${name}, namespace: ${ns} }
spec:
  volumeSnapshotClassName: ${className}
  source: { persistentVolumeClaimName: data }
`;

/** A namespace with a bound claim `data`, a class copying to `region`, and a VolumeSnapshot of the claim. */
async function snapshotWithCopy(ns: string, className: string, policy: 'Delete' | 'Retain', region: string): Promise<void> {
  await kubectl('create', 'namespace', ns);
  await kubectl.create(claimYaml(ns, 'data'));
  await waitClaimBound(ctx, ns, 'data');
  await kubectl.create(classYaml(className, policy, region));
  await kubectl.create(snapshotYaml(ns, 'nightly', className));
}

/** The bound content once its copy settled (completed or failed). */
async function settledContent(ns: string): Promise<ContentJson> {
  const vs = await waitFor(
    () => getJson<{ status?: { boundVolumeSnapshotContentName?: string } }>('volumesnapshot', 'nightly', '-n', ns),
    (s) => !!s.status?.boundVolumeSnapshotContentName,
    { what: `VolumeSnapshot ${ns}/nightly bound`, timeoutMs: 90_000 },
  );
  return waitFor(
    () => getJson<ContentJson>('volumesnapshotcontent', vs.status!.boundVolumeSnapshotContentName!),
    (c) => ['completed', 'failed'].includes(snapshotCopyOf(c)?.state ?? ''),
    { what: `the copy of ${ns}/nightly settled`, timeoutMs: 120_000 },
  );
}

describe('cross-Region snapshot copies over the local stack', () => {
  it('copyToRegion us-west-2 -> the copy exists there, tagged like the snapshot, named in the content annotation; Delete -> both go', async () => {
    const ns = 'copy-delete';
    await snapshotWithCopy(ns, 'copy-west-delete', 'Delete', ALLOWED);
    const content = await settledContent(ns);
    const record = snapshotCopyOf(content);
    expect(record).toMatchObject({ region: ALLOWED, state: 'completed', snapshotId: expect.stringMatching(/^snap-/) });
    expect(content.status).toMatchObject({ readyToUse: true });
    const source = content.status!.snapshotHandle!;

    const copies = await clusterSnapshotsIn(ALLOWED);
    expect(copies.map((s) => s.SnapshotId)).toEqual([record!.snapshotId]);
    expect(copies[0]).toMatchObject({ State: 'completed', Description: `[Copied ${source} from us-east-1]` });
    expect(tagsOf(copies[0] as never)).toMatchObject({ CSIVolumeSnapshotName: content.metadata.name, 'volhook.io/cluster': stack.clusterId, 'ebs.csi.aws.com/cluster': 'true', backup: `${ns}/nightly` });
    // The copy is in us-west-2 only, the source in us-east-1 only.
    expect((await clusterSnapshotsIn('us-east-1')).map((s) => s.SnapshotId)).toContain(source);
    expect((await clusterSnapshotsIn('us-east-1')).map((s) => s.SnapshotId)).not.toContain(record!.snapshotId);
    const events = await eventsFor(stack.kube, ns, 'VolumeSnapshot', 'nightly');
    expect(events.some((e) => e.type === 'Normal' && e.reason === 'SnapshotCopied')).toBe(true);

    // The audit, as the operator runs it, shows the copy in its Region.
    await freshReport(stack, Date.now() + 1000);
    const audited = await auditCli(clusterCli(localDir))();
    expect(audited.snapshotCopies).toContainEqual(
      expect.objectContaining({ content: content.metadata.name, region: ALLOWED, verdict: 'ok', recorded: { state: 'completed', snapshotId: record!.snapshotId }, inEc2: [{ snapshotId: record!.snapshotId, state: 'completed' }] }),
    );

    await kubectl('delete', 'volumesnapshot', 'nightly', '-n', ns, '--wait=false');
    await waitFor(() => clusterSnapshotsIn(ALLOWED), (all) => !all.some((s) => s.SnapshotId === record!.snapshotId), { what: `copy ${record!.snapshotId} deleted`, timeoutMs: 60_000 });
    await waitFor(() => clusterSnapshotsIn('us-east-1'), (all) => !all.some((s) => s.SnapshotId === source), { what: `snapshot ${source} deleted`, timeoutMs: 60_000 });
  }, 240_000);

  it('Retain -> the VolumeSnapshot deleted, the snapshot and its copy stay', async () => {
    const ns = 'copy-retain';
    await snapshotWithCopy(ns, 'copy-west-retain', 'Retain', ALLOWED);
    const content = await settledContent(ns);
    const record = snapshotCopyOf(content);
    expect(record?.state).toBe('completed');
    await kubectl('delete', 'volumesnapshot', 'nightly', '-n', ns, '--wait=false');
    await waitFor(() => kubectl('get', 'volumesnapshot', '-n', ns, '--ignore-not-found', '-o', 'name'), (out) => !out.includes('nightly'), { what: 'VolumeSnapshot nightly gone' });
    await sleep(2_000);
    expect((await clusterSnapshotsIn(ALLOWED)).map((s) => s.SnapshotId)).toContain(record!.snapshotId);
    expect((await clusterSnapshotsIn('us-east-1')).map((s) => s.SnapshotId)).toContain(content.status!.snapshotHandle);
  }, 240_000);

  it('copyToRegion eu-west-1, denied by the guard rail -> Warning SnapshotCopyFailed on the VolumeSnapshot, no copy there, the snapshot ready and restorable', async () => {
    const ns = 'copy-denied';
    await snapshotWithCopy(ns, 'copy-denied', 'Delete', DENIED);
    const content = await settledContent(ns);
    expect(snapshotCopyOf(content)).toMatchObject({ region: DENIED, state: 'failed', message: expect.stringContaining('UnauthorizedOperation') });
    expect(content.metadata.annotations?.[SNAPSHOT_COPY_ANNOTATION]).toBeDefined();
    expect(content.status).toMatchObject({ readyToUse: true });
    const events = await waitFor(
      () => eventsFor(stack.kube, ns, 'VolumeSnapshot', 'nightly'),
      (es) => es.some((e) => e.type === 'Warning' && e.reason === 'SnapshotCopyFailed'),
      { what: 'Warning SnapshotCopyFailed on nightly' },
    );
    expect(events.find((e) => e.reason === 'SnapshotCopyFailed')?.message).toMatch(/to Region eu-west-1 failed \(the snapshot itself is ready to use\): .*ec2:CopySnapshot/);
    expect(await clusterSnapshotsIn(DENIED)).toEqual([]);
    // The source is usable: a claim restores from it.
    await kubectl.create(claimYaml(ns, 'restored', { spec: `  dataSource: { apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: nightly }\n` }));
    await waitClaimBound(ctx, ns, 'restored');
  }, 240_000);
});
