/**
 * The provisioner name a cluster is served under comes from its registration (`provisioner`,
 * the chart's value registered the same; unset: ebs.csi.aws.com). A claim of that provisioner is
 * provisioned; a claim of any other one that reaches the backend is answered `failed`
 * (OtherProvisioner), with nothing written on it and no EC2 call — never a silent `done`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CreateVolumeCommand, EC2Client } from '@aws-sdk/client-ec2';
import { createApp } from '../../lib/app/index.js';
import { ReconcileResponseSchema } from '../../lib/contract/index.js';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { createStaticRegistry, servedProvisioner } from '../../lib/registry/index.js';
import { FakeEc2 } from '../ec2/fake-ec2.js';
import { fixtureBody, NOW_MS, registration, SECRET_C1, signedRequest } from './harness.js';

const CANARY = 'canary.volhook.io';
const template = JSON.parse(fixtureBody).items[0];

let fake: FakeEc2 | undefined;
afterEach(() => {
  fake?.restore();
  fake = undefined;
});

function appFor(extra: Record<string, unknown>) {
  fake = new FakeEc2();
  const client = new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 's' }, maxAttempts: 1 });
  return createApp({
    registry: createStaticRegistry([registration('c1', SECRET_C1, extra)]),
    gatewayFor: (reg, deadline) => createEc2Gateway({ client, clusterId: reg.clusterId, deadline }),
    now: () => NOW_MS,
  });
}

/** One claim of `provisioner` (its annotations and its class), answered. */
async function claimOf(app: ReturnType<typeof createApp>, provisioner: string) {
  const item = structuredClone(template);
  item.pvc.metadata.annotations['volume.kubernetes.io/storage-provisioner'] = provisioner;
  item.pvc.metadata.annotations['volume.beta.kubernetes.io/storage-provisioner'] = provisioner;
  item.storageClass.provisioner = provisioner;
  const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', JSON.stringify({ clusterId: 'c1', items: [item] }), SECRET_C1);
  const res = await app.request(path, init);
  expect(res.status).toBe(200);
  return ReconcileResponseSchema.parse(await res.json()).results[0]!;
}

describe('the provisioner a cluster is registered for', () => {
  it('unset -> ebs.csi.aws.com', () => {
    expect(servedProvisioner({})).toBe('ebs.csi.aws.com');
    expect(servedProvisioner({ provisioner: CANARY })).toBe(CANARY);
  });

  it('registered for a canary name: its claim is provisioned (CreateVolume), one of ebs.csi.aws.com failed OtherProvisioner, untouched', async () => {
    const app = appFor({ provisioner: CANARY });
    const ours = await claimOf(app, CANARY);
    expect(ours.outcome).toBe('requeue');
    expect(fake!.mock.commandCalls(CreateVolumeCommand)).toHaveLength(1);

    const theirs = await claimOf(app, 'ebs.csi.aws.com');
    expect(theirs).toMatchObject({ outcome: 'failed', reason: 'OtherProvisioner', writes: [] });
    expect(theirs.outcome === 'failed' && theirs.message).toContain(`is for provisioner "ebs.csi.aws.com", but cluster "c1" is registered for "${CANARY}"`);
    expect(fake!.mock.commandCalls(CreateVolumeCommand)).toHaveLength(1);
  });

  it('registered without one: a claim of ebs.csi.aws.com is provisioned, one of the canary name failed OtherProvisioner', async () => {
    const app = appFor({});
    expect((await claimOf(app, 'ebs.csi.aws.com')).outcome).toBe('requeue');
    expect(fake!.mock.commandCalls(CreateVolumeCommand)).toHaveLength(1);
    expect(await claimOf(app, CANARY)).toMatchObject({ outcome: 'failed', reason: 'OtherProvisioner', writes: [] });
    expect(fake!.mock.commandCalls(CreateVolumeCommand)).toHaveLength(1);
  });

  it('a registration naming an empty provisioner -> refused as invalid (403), nothing done', async () => {
    const app = appFor({ provisioner: '' });
    const item = structuredClone(template);
    const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', JSON.stringify({ clusterId: 'c1', items: [item] }), SECRET_C1);
    const res = await app.request(path, init);
    expect(res.status).toBe(403);
    expect(fake!.mock.commandCalls(CreateVolumeCommand)).toHaveLength(0);
  });
});

describe("the check: the forwarder's provisioner against the registration's", () => {
  async function check(extra: Record<string, unknown>, body: Record<string, unknown>) {
    const app = appFor(extra);
    const { path, ...init } = signedRequest('/v1/clusters/c1/check', JSON.stringify({ clusterId: 'c1', ...body }), SECRET_C1);
    const res = await app.request(path, init);
    return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
  }

  it('the same name -> accepted (the control)', async () => {
    expect((await check({ provisioner: CANARY }, { provisioner: CANARY })).status).toBe(200);
    expect((await check({}, { provisioner: 'ebs.csi.aws.com' })).status).toBe(200);
  });

  it('another name -> 403 provisioner_mismatch naming both: the replica is not ready', async () => {
    const refused = await check({}, { provisioner: CANARY });
    expect(refused.status).toBe(403);
    expect(refused.body.error?.code).toBe('provisioner_mismatch');
    expect(refused.body.error?.message).toContain(`serves provisioner "${CANARY}", but cluster "c1" is registered for "ebs.csi.aws.com"`);
  });

  it('a forwarder that says no provisioner (before this check) -> accepted, as before', async () => {
    expect((await check({ provisioner: CANARY }, {})).status).toBe(200);
  });
});
