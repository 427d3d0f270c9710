/**
 * One bad item never fails another: a claim uid that is not a Kubernetes uid (here with a lone
 * UTF-16 surrogate, which the SDK cannot even encode into a DescribeVolumes filter) is refused
 * alone, before EC2; the good items of the same request go on, their look-ups in one batch.
 */
import { CreateVolumeCommand, DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { afterEach, expect, it } from 'vitest';
import { ReconcileResponseSchema } from '../../lib/contract/index.js';
import { FakeEc2 } from '../ec2/fake-ec2.js';
import { appOverFakeEc2, fixtureBody, SECRET_C1, signedRequest } from './harness.js';

const template = JSON.parse(fixtureBody).items[0];
let fake: FakeEc2;
afterEach(() => fake.restore());

it('a bad uid in a batch of good claims -> only that item refused (InvalidItem, naming the uid); the others provisioned, their look-ups batched together', async () => {
  fake = new FakeEc2();
  const app = appOverFakeEc2();
  const items = ['00000000-0000-4000-8000-000000000001', '\ud800-lone-surrogate', '00000000-0000-4000-8000-000000000003'].map((uid, i) => {
    const item = structuredClone(template);
    item.pvc.metadata.uid = uid;
    item.pvc.metadata.name = `data-${i}`;
    return item;
  });
  const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', JSON.stringify({ clusterId: 'c1', items }), SECRET_C1);
  const res = await app.request(path, init);
  expect(res.status).toBe(200);
  const { results } = ReconcileResponseSchema.parse(await res.json());

  expect(results.map((r) => r.outcome)).toEqual(['requeue', 'failed', 'requeue']);
  expect(results[1]).toMatchObject({ reason: 'InvalidItem', message: expect.stringContaining('is not a Kubernetes uid') });
  expect(results[1]!.writes).toEqual([]);
  expect(fake.mock.commandCalls(CreateVolumeCommand)).toHaveLength(2);
  const lookups = fake.mock.commandCalls(DescribeVolumesCommand).filter((c) => c.args[0].input.Filters?.some((f) => f.Name === 'tag:CSIVolumeName'));
  // Look-up before create, and the gateway's own before CreateVolume: each one call for both good claims.
  expect(lookups.length).toBeGreaterThan(0);
  for (const lookup of lookups) {
    expect(lookup.args[0].input.Filters?.find((f) => f.Name === 'tag:CSIVolumeName')?.Values).toEqual([
      'pvc-00000000-0000-4000-8000-000000000001',
      'pvc-00000000-0000-4000-8000-000000000003',
    ]);
  }
});
