/**
 * Whole requests through the app, over a stateful fake EC2 behind aws-sdk-client-mock:
 * batching, idempotency across replays, and throttling as a request sees them.
 */
import { CreateVolumeCommand, DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { ReconcileResponseSchema, type ReconcileResponse } from '../../lib/contract/index.js';
import { ec2Error, FakeEc2 } from '../ec2/fake-ec2.js';
import { appOverFakeEc2, fixtureBody, SECRET_C1, signedRequest } from './harness.js';

const template = JSON.parse(fixtureBody).items[0];

/** `n` WaitForFirstConsumer claims like the fixture's, each with its own uid and name. */
function claims(n: number) {
  return Array.from({ length: n }, (_, i) => {
    const item = structuredClone(template);
    item.pvc.metadata.uid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    item.pvc.metadata.name = `data-${i}`;
    return item;
  });
}

let fake: FakeEc2;
afterEach(() => fake.restore());

async function reconcile(app: ReturnType<typeof appOverFakeEc2>, items: unknown[]): Promise<ReconcileResponse> {
  const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', JSON.stringify({ clusterId: 'c1', items }), SECRET_C1);
  const res = await app.request(path, init);
  expect(res.status).toBe(200);
  return ReconcileResponseSchema.parse(await res.json());
}

const calls = (command: typeof CreateVolumeCommand | typeof DescribeVolumesCommand) => fake.mock.commandCalls(command).length;

describe('a reconcile request as a whole', () => {
  it('200 claims whose volumes are all creating -> one DescribeVolumes, every item requeued', async () => {
    fake = new FakeEc2();
    const app = appOverFakeEc2();
    const items = claims(200);
    await reconcile(app, items); // creates the 200 volumes; the fake leaves them creating
    expect(calls(CreateVolumeCommand)).toBe(200);
    fake.mock.resetHistory();
    for (const volume of fake.volumes.values()) volume.State = 'creating';

    const { results } = await reconcile(app, items);

    expect(calls(DescribeVolumesCommand)).toBe(1);
    expect(calls(CreateVolumeCommand)).toBe(0);
    expect(results.map((r) => r.outcome)).toEqual(Array(200).fill('requeue'));
    expect(results.every((r) => r.writes.length === 0)).toBe(true);
  });

  it('the same request replayed after the volumes exist -> no second volume, the same PV each time', async () => {
    fake = new FakeEc2();
    const app = appOverFakeEc2();
    const items = claims(3);
    for (let round = 0; round < 5; round++) await reconcile(app, items);
    const first = await reconcile(app, items);
    const again = await reconcile(app, items);

    expect(calls(CreateVolumeCommand)).toBe(3);
    expect(fake.volumes.size).toBe(3);
    expect(first.results.map((r) => r.outcome)).toEqual(['done', 'done', 'done']);
    expect(again).toEqual(first);
    const handles = first.results.map((r) => r.writes.find((w) => w.op === 'createPersistentVolume'));
    expect(new Set(handles.map((w) => (w?.op === 'createPersistentVolume' ? w.pv.spec.csi?.volumeHandle : undefined))).size).toBe(3);
  });

  it('a response lost after CreateVolume -> the replay finds the volume by tag, no second CreateVolume', async () => {
    fake = new FakeEc2();
    const app = appOverFakeEc2();
    const [item] = claims(1);
    // The first attempt's CreateVolume succeeded but its answer never reached anyone.
    const existing = fake.addVolume({
      State: 'available',
      Size: 20,
      tags: {
        CSIVolumeName: `pvc-${item.pvc.metadata.uid}`,
        'kubernetes.io/cluster/c1': 'owned',
        'ebs.csi.aws.com/cluster': 'true',
        'volhook.io/cluster': 'c1',
      },
    });
    // Drive the claim as the forwarder would until the PV is asked for: a round that only
    // writes a finalizer onto the claim (no EC2 call) is applied to the claim and replayed.
    const pvWrites: string[] = [];
    let last: ReconcileResponse['results'][number] | undefined;
    for (let round = 0; round < 3 && pvWrites.length === 0; round++) {
      const { results } = await reconcile(app, [item]);
      last = results[0];
      for (const w of last?.writes ?? []) {
        if (w.op === 'createPersistentVolume' && w.pv.spec.csi) pvWrites.push(w.pv.spec.csi.volumeHandle);
        if (w.op === 'addFinalizer' && w.target.kind === 'PersistentVolumeClaim') {
          const finalizers: string[] = (item.pvc.metadata.finalizers ??= []);
          if (!finalizers.includes(w.finalizer)) finalizers.push(w.finalizer);
        }
      }
    }
    expect(calls(CreateVolumeCommand)).toBe(0);
    expect(last?.outcome).toBe('done');
    // The PV names the volume that already existed, and is asked for once.
    expect(pvWrites).toEqual([existing]);
    expect(fake.volumes.size).toBe(1);
  });

  it('EC2 throttling every call -> every item requeued, none failed', async () => {
    fake = new FakeEc2();
    fake.mock.on(DescribeVolumesCommand).rejects(ec2Error('RequestLimitExceeded', 'Request limit exceeded.', 503));
    fake.mock.on(CreateVolumeCommand).rejects(ec2Error('RequestLimitExceeded', 'Request limit exceeded.', 503));
    const app = appOverFakeEc2();
    const { results } = await reconcile(app, claims(20));
    expect(results.map((r) => r.outcome)).toEqual(Array(20).fill('requeue'));
  });

  it('EC2 answering 500 -> requeued, never failed', async () => {
    fake = new FakeEc2();
    fake.mock.on(DescribeVolumesCommand).rejects(ec2Error('InternalError', 'An internal error has occurred', 500));
    const app = appOverFakeEc2();
    const { results } = await reconcile(app, claims(5));
    expect(results.map((r) => r.outcome)).toEqual(Array(5).fill('requeue'));
  });
});
