/**
 * A VolumeSnapshotClass's copyToRegion: the content's snapshot copied into another Region once
 * completed, recorded on the content (annotation volhook.io/snapshot-copy), deleted with the
 * snapshot under Delete and kept under Retain; a refused copy is a Warning on the VolumeSnapshot.
 */
import { describe, expect, it } from 'vitest';
import { isSettledContent, ItemSchema, SNAPSHOT_COPY_ANNOTATION, snapshotCopyOf, type Result, type VolumeSnapshotContent, type VolumeSnapshotContentItem } from '../../lib/contract/index.js';
import { Ec2Error, type RegionSnapshots } from '../../lib/ec2/types.js';
import { snapshotSpecFor } from '../../lib/storageclass/index.js';
import { FakeGateway } from './fake-gateway.js';
import { CLUSTER, reconcileOne, setup } from './fixtures.js';
import { BEING_DELETED, CONTENT_NAME, SNAPSHOT_UID, SOURCE_VOLUME, content, contentItem, snapshotClass } from './snapshot-fixtures.js';

const WEST = 'us-west-2';
const copyClass = (parameters: Record<string, string> = { copyToRegion: WEST }, deletionPolicy = 'Delete') => snapshotClass({ parameters, deletionPolicy });

/** The item with exactly this content (no defaults merged in). */
const item = (current: VolumeSnapshotContent, cls: unknown = copyClass()) => ItemSchema.parse({ kind: 'VolumeSnapshotContent', content: current, snapshotClass: cls }) as VolumeSnapshotContentItem;

const events = (result: Result) => result.writes.flatMap((w) => (w.op === 'createEvent' ? [{ kind: w.involvedObject.kind, name: w.involvedObject.name, type: w.type, reason: w.reason, message: w.message }] : []));

/** The content as the cluster holds it after `result`'s writes are applied. */
function applied(current: VolumeSnapshotContent, result: Result): VolumeSnapshotContent {
  const next = structuredClone(current);
  for (const w of result.writes) {
    if (w.op === 'setAnnotation') next.metadata.annotations = { ...next.metadata.annotations, [w.key]: w.value };
    if (w.op === 'removeAnnotation') {
      const { [w.key]: _, ...rest } = next.metadata.annotations ?? {};
      next.metadata.annotations = rest;
    }
    if (w.op === 'updateVolumeSnapshotContentStatus') next.status = { ...next.status, ...w.status };
    if (w.op === 'removeFinalizer') next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== w.finalizer);
  }
  return next;
}

/** Reconciles the content until a reconcile writes nothing new and is not an immediate requeue, settling EC2 in between. */
async function run(ec2: FakeGateway, ctx: ReturnType<typeof setup>['ctx'], start: VolumeSnapshotContent, parameters?: Record<string, string>): Promise<{ content: VolumeSnapshotContent; results: Result[] }> {
  let current = start;
  const results: Result[] = [];
  for (let n = 0; n < 12; n++) {
    const result = await reconcileOne(ctx, item(current, copyClass(parameters)));
    results.push(result);
    current = applied(current, result);
    ec2.settle();
    if (result.outcome === 'done' && result.writes.length === 0) break;
  }
  return { content: current, results };
}

function freshContent(): VolumeSnapshotContent {
  const c = structuredClone(content()) as VolumeSnapshotContent;
  c.metadata.annotations = {};
  return c;
}

describe('copyToRegion: the copy', () => {
  it('intent with the being-created mark; once the snapshot is completed, copying is recorded before CopySnapshot; then the copy, completed, in the annotation', async () => {
    const { ec2, ctx } = setup({ extraTags: { costcenter: '42' } });
    ec2.addVolume({ volumeId: SOURCE_VOLUME, sizeGiB: 10 });
    const first = await reconcileOne(ctx, item(freshContent(), copyClass()));
    expect(first.writes.map((w) => (w.op === 'setAnnotation' ? [w.key, w.value] : w.op))).toEqual([
      ['snapshot.storage.kubernetes.io/volumesnapshot-being-created', 'yes'],
      [SNAPSHOT_COPY_ANNOTATION, JSON.stringify({ region: WEST, state: 'waiting' })],
    ]);
    expect(ec2.calls).toEqual([]);
    // Not settled while the copy waits: the forwarder keeps sending it even once ready.
    const marked = applied(freshContent(), first);
    expect(isSettledContent({ ...marked, status: { readyToUse: true } })).toBe(false);

    const { content: final, results } = await run(ec2, ctx, marked);
    const copies = [...(ec2.regionSnapshots.get(WEST)?.values() ?? [])];
    expect(copies).toHaveLength(1);
    const [source] = [...ec2.snapshots.values()];
    expect(copies[0]!.tags).toMatchObject({ CSIVolumeSnapshotName: CONTENT_NAME, [`kubernetes.io/cluster/${CLUSTER}`]: 'owned', 'volhook.io/cluster': CLUSTER, 'ebs.csi.aws.com/cluster': 'true', costcenter: '42' });
    expect(snapshotCopyOf(final)).toEqual({ region: WEST, state: 'completed', snapshotId: copies[0]!.snapshotId });
    expect(final.status).toMatchObject({ snapshotHandle: source!.snapshotId, readyToUse: true });
    expect(isSettledContent(final)).toBe(true);
    // Copying was on the content (seen applied) before the CopySnapshot was sent.
    const copyingAt = results.findIndex((r) => r.writes.some((w) => w.op === 'setAnnotation' && w.value.includes('"copying"')));
    const copiedAt = results.findIndex((_, n) => ec2.calls.filter((c) => c.verb === 'snapshotsIn' && c.args[1] === 'copySnapshot').length > 0 && n > copyingAt);
    expect(copyingAt).toBeGreaterThan(-1);
    expect(copiedAt).toBeGreaterThan(copyingAt);
    expect(events(results.at(-2) ?? results.at(-1)!).concat(...results.map(events)).some((e) => e.kind === 'VolumeSnapshot' && e.reason === 'SnapshotCopied')).toBe(true);
  });

  it('a lost answer after CopySnapshot -> the retry finds the copy by its name in the destination: exactly one copy', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: SOURCE_VOLUME, sizeGiB: 10 });
    let lost = 1;
    let sent = 0;
    const inRegion = ec2.snapshotsIn.bind(ec2);
    ec2.snapshotsIn = (region: string): RegionSnapshots => {
      const real = inRegion(region);
      return {
        ...real,
        copySnapshot: async (request) => {
          sent++;
          const made = await real.copySnapshot(request);
          if (lost-- > 0) throw new Ec2Error('transient', 'ECONNRESET', 'EC2 CopySnapshot: ECONNRESET: socket hang up', 'CopySnapshot');
          return made;
        },
      };
    };
    const { content: final } = await run(ec2, ctx, applied(freshContent(), await reconcileOne(ctx, item(freshContent(), copyClass()))));
    expect(lost).toBe(0);
    expect(sent).toBe(1);
    expect(ec2.regionSnapshots.get(WEST)?.size).toBe(1);
    expect(snapshotCopyOf(final)?.state).toBe('completed');
  });

  it('CopySnapshot refused (IAM) -> failed with the reason, a Warning on the VolumeSnapshot, not tried again; the snapshot stays ready', async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: SOURCE_VOLUME, sizeGiB: 10 });
    const inRegion = ec2.snapshotsIn.bind(ec2);
    const denied = new Ec2Error('unauthorized', 'UnauthorizedOperation', 'EC2 CopySnapshot: the backend\'s role is not allowed to call ec2:CopySnapshot (UnauthorizedOperation): explicit deny', 'CopySnapshot');
    ec2.snapshotsIn = (region: string): RegionSnapshots => ({ ...inRegion(region), copySnapshot: () => Promise.reject(denied) });
    const { content: final, results } = await run(ec2, ctx, applied(freshContent(), await reconcileOne(ctx, item(freshContent(), copyClass()))));
    expect(snapshotCopyOf(final)).toMatchObject({ region: WEST, state: 'failed', message: expect.stringContaining('UnauthorizedOperation') });
    expect(final.status?.readyToUse).toBe(true);
    const warnings = results.flatMap(events).filter((e) => e.type === 'Warning');
    expect(warnings).toEqual([{ kind: 'VolumeSnapshot', name: 'nightly', type: 'Warning', reason: 'SnapshotCopyFailed', message: expect.stringMatching(/to Region us-west-2 failed \(the snapshot itself is ready to use\): .*UnauthorizedOperation/) }]);
    expect(isSettledContent(final)).toBe(true);
    ec2.calls.length = 0;
    expect(await reconcileOne(ctx, item(final, copyClass()))).toMatchObject({ outcome: 'done', writes: [] });
    expect(ec2.calls).toEqual([]);
  });

  it("the cluster's own Region as copyToRegion -> failed naming it, no CopySnapshot; control: another Region copies", async () => {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: SOURCE_VOLUME, sizeGiB: 10 });
    const own = { copyToRegion: 'us-east-1' };
    const start = applied(freshContent(), await reconcileOne(ctx, item(freshContent(), copyClass(own))));
    const { content: final } = await run(ec2, ctx, start, own);
    expect(snapshotCopyOf(final)).toMatchObject({ state: 'failed', message: expect.stringContaining("us-east-1 is the cluster's own Region") });
    expect(ec2.calls.filter((c) => c.verb === 'snapshotsIn')).toEqual([]);
  });
});

describe('copyToRegion: deletion', () => {
  async function copied() {
    const { ec2, ctx } = setup();
    ec2.addVolume({ volumeId: SOURCE_VOLUME, sizeGiB: 10 });
    const start = applied(freshContent(), await reconcileOne(ctx, item(freshContent(), copyClass())));
    const { content: ready } = await run(ec2, ctx, start);
    const deleting = { ...ready, metadata: { ...ready.metadata, deletionTimestamp: '2026-01-01T00:00:00Z', annotations: { ...ready.metadata.annotations, [BEING_DELETED]: 'yes' } } };
    return { ec2, ctx, ready, deleting };
  }

  it('Delete -> the copy in its Region, then the snapshot, then the finalizer', async () => {
    const { ec2, ctx, deleting } = await copied();
    const result = await reconcileOne(ctx, item(deleting, copyClass()));
    expect(result.outcome).toBe('done');
    expect(ec2.regionSnapshots.get(WEST)?.size).toBe(0);
    expect(ec2.snapshots.size).toBe(0);
    const deletes = ec2.calls.filter((c) => c.verb === 'deleteSnapshot' || (c.verb === 'snapshotsIn' && c.args[1] === 'deleteSnapshot')).map((c) => c.verb);
    expect(deletes).toEqual(['snapshotsIn', 'deleteSnapshot']);
    expect(result.writes.map((w) => w.op)).toContain('removeFinalizer');
  });

  it('Retain -> the copy and the snapshot stay; only the finalizer goes', async () => {
    const { ec2, ctx, deleting } = await copied();
    const retained = { ...deleting, spec: { ...deleting.spec, deletionPolicy: 'Retain' as const } };
    const result = await reconcileOne(ctx, item(retained, copyClass({ copyToRegion: WEST }, 'Retain')));
    expect(result.outcome).toBe('done');
    expect(result.writes.map((w) => w.op)).toEqual(['removeFinalizer']);
    expect(ec2.regionSnapshots.get(WEST)?.size).toBe(1);
    expect(ec2.snapshots.size).toBe(1);
  });

  it("a copy the annotation names that is not the cluster's -> not deleted, Warning; control: the cluster's is", async () => {
    const { ec2, ctx, deleting } = await copied();
    const [copy] = [...ec2.regionSnapshots.get(WEST)!.values()];
    copy!.tags['volhook.io/cluster'] = 'someone-else';
    const result = await reconcileOne(ctx, item(deleting, copyClass()));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'NotOwned' });
    expect(ec2.regionSnapshots.get(WEST)?.size).toBe(1);
    expect(ec2.snapshots.size).toBe(1);
    copy!.tags['volhook.io/cluster'] = CLUSTER;
    expect(await reconcileOne(ctx, item(deleting, copyClass()))).toMatchObject({ outcome: 'done' });
    expect(ec2.regionSnapshots.get(WEST)?.size).toBe(0);
  });

  it('a copy made whose answer was lost before its ID was recorded -> found by its name and deleted too', async () => {
    const { ec2, ctx, deleting } = await copied();
    const copying = { ...deleting, metadata: { ...deleting.metadata, annotations: { ...deleting.metadata.annotations, [SNAPSHOT_COPY_ANNOTATION]: JSON.stringify({ region: WEST, state: 'copying' }) } } };
    expect(await reconcileOne(ctx, item(copying, copyClass()))).toMatchObject({ outcome: 'done' });
    expect(ec2.regionSnapshots.get(WEST)?.size).toBe(0);
  });
});

describe('copyToRegion: the class parameters', () => {
  const spec = (parameters: Record<string, string>) =>
    snapshotSpecFor({ parameters, volumeSnapshotName: 'nightly', volumeSnapshotNamespace: 'shop', volumeSnapshotContentName: `snapcontent-${SNAPSHOT_UID}` });

  it('copyToRegion and its KMS key (keys case-insensitive)', () => {
    expect(spec({ copyToRegion: WEST }).copy).toEqual({ region: WEST });
    expect(spec({ COPYTOREGION: 'eu-central-1', copyToRegionKmsKeyId: 'alias/backups' }).copy).toEqual({ region: 'eu-central-1', kmsKeyId: 'alias/backups' });
    expect(spec({}).copy).toBeUndefined();
  });

  it.each([
    [{ copyToRegion: 'Oregon' }, /copyToRegion.*"Oregon" is not an AWS Region name/],
    [{ copyToRegion: 'us-west-2a' }, /copyToRegion.*"us-west-2a"/],
    [{ copyToRegionKmsKeyId: 'k' }, /copyToRegionKmsKeyId.*needs copyToRegion/],
    [{ copyToRegion: WEST, copyToRegionKmsKeyId: ' ' }, /copyToRegionKmsKeyId.*names no KMS key/],
    [{ copyToRegions: WEST }, /copyToRegions.*is not a VolumeSnapshotClass parameter/],
  ])('%j -> refused naming the key', (parameters, message) => {
    expect(() => spec(parameters)).toThrow(message);
  });

  it('a refused class -> the content refused before any EC2 call', async () => {
    const { ec2, ctx } = setup();
    const result = await reconcileOne(ctx, contentItem({ snapshotClass: copyClass({ copyToRegion: 'Oregon' }) }));
    expect(result).toMatchObject({ outcome: 'failed', reason: 'InvalidParameter' });
    expect(ec2.calls).toEqual([]);
  });
});
