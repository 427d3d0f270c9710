/** A VolumeSnapshotContent item through the whole app: signed request, zod contract, SDK gateway over a stateful EC2 mock. */
import { CreateSnapshotCommand, DeleteSnapshotCommand } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { ReconcileResponseSchema, type ReconcileResponse } from '../../lib/contract/index.js';
import { FakeEc2 } from '../ec2/fake-ec2.js';
import { appOverFakeEc2, SECRET_C1, signedRequest } from './harness.js';

let fake: FakeEc2;
afterEach(() => fake.restore());

async function reconcile(app: ReturnType<typeof appOverFakeEc2>, items: unknown[]): Promise<ReconcileResponse> {
  const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', JSON.stringify({ clusterId: 'c1', items }), SECRET_C1);
  const res = await app.request(path, init);
  expect(res.status).toBe(200);
  return ReconcileResponseSchema.parse(await res.json());
}

const contentItem = (volumeId: string, extra: { annotations?: Record<string, string>; status?: object; deletionTimestamp?: string } = {}) => ({
  kind: 'VolumeSnapshotContent',
  content: {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotContent',
    metadata: {
      name: 'snapcontent-1',
      uid: 'c-uid-1',
      annotations: extra.annotations ?? {},
      finalizers: ['snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection'],
      ...(extra.deletionTimestamp && { deletionTimestamp: extra.deletionTimestamp }),
    },
    spec: {
      driver: 'ebs.csi.aws.com',
      deletionPolicy: 'Delete',
      source: { volumeHandle: volumeId },
      volumeSnapshotClassName: 'ebs',
      volumeSnapshotRef: { namespace: 'default', name: 'nightly', uid: 'vs-uid-1' },
    },
    ...(extra.status && { status: extra.status }),
  },
  snapshotClass: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshotClass', metadata: { name: 'ebs' }, driver: 'ebs.csi.aws.com', deletionPolicy: 'Delete' },
});

describe('VolumeSnapshotContent items over the app', () => {
  it('mark, create, record, delete: one CreateSnapshot, one DeleteSnapshot, every answer valid against the contract', async () => {
    fake = new FakeEc2();
    const app = appOverFakeEc2();
    const volumeId = fake.addVolume({ tags: { 'kubernetes.io/cluster/c1': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'c1' } });
    const being = { 'snapshot.storage.kubernetes.io/volumesnapshot-being-created': 'yes' };

    const [mark] = (await reconcile(app, [contentItem(volumeId)])).results;
    expect(mark).toMatchObject({ key: 'VolumeSnapshotContent/snapcontent-1', outcome: 'requeue', writes: [{ op: 'setAnnotation' }] });
    expect(fake.mock.commandCalls(CreateSnapshotCommand)).toHaveLength(0);

    const [created] = (await reconcile(app, [contentItem(volumeId, { annotations: being })])).results;
    expect(fake.mock.commandCalls(CreateSnapshotCommand)).toHaveLength(1);
    const status = created!.writes.find((w) => w.op === 'updateVolumeSnapshotContentStatus');
    expect(status).toMatchObject({ status: { snapshotHandle: expect.stringMatching(/^snap-/), readyToUse: false } });

    // The same item again (a replay, or the answer lost): found by name, no second snapshot.
    await reconcile(app, [contentItem(volumeId, { annotations: being })]);
    expect(fake.mock.commandCalls(CreateSnapshotCommand)).toHaveLength(1);

    const handle = status!.op === 'updateVolumeSnapshotContentStatus' ? status!.status.snapshotHandle : undefined;
    const [deleted] = (
      await reconcile(app, [
        contentItem(volumeId, {
          annotations: { 'snapshot.storage.kubernetes.io/volumesnapshot-being-deleted': 'yes' },
          deletionTimestamp: '2026-11-30T09:59:00Z',
          status: { snapshotHandle: handle, readyToUse: true },
        }),
      ])
    ).results;
    expect(fake.mock.commandCalls(DeleteSnapshotCommand)).toHaveLength(1);
    expect(deleted).toMatchObject({ outcome: 'done' });
    expect(deleted!.writes.map((w) => w.op)).toEqual(['updateVolumeSnapshotContentStatus', 'removeFinalizer']);
    expect(fake.snapshots.size).toBe(0);
  });
});
