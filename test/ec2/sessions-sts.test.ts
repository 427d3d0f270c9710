/**
 * A session per cluster over HTTP, against the simulator's STS and EC2: the session's tag is
 * what the role's policy fences by, and its credentials serve every call until they near expiry.
 */
import { CreateVolumeCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSessionCache } from '../../lib/ec2/sessions.js';
import type { PolicyDocument } from '../../lib/iam/policy.js';
import { startTestSim, type TestSim } from '../local/ec2/helpers.js';

describe('over HTTP, against the simulator STS', () => {
  const ACCOUNT = '123456789012';
  const EC2_ROLE = `arn:aws:iam::${ACCOUNT}:role/volhook/volhook-ec2`;
  // Creation only when the new volume carries the session's cluster id.
  const fenced: PolicyDocument = {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Action: 'ec2:CreateVolume', Resource: 'arn:aws:ec2:*:*:volume/*', Condition: { StringEquals: { 'aws:RequestTag/volhook.io/cluster': '${aws:PrincipalTag/volhook-cluster}' } } },
      { Effect: 'Allow', Action: 'ec2:CreateTags', Resource: 'arn:aws:ec2:*:*:volume/*', Condition: { StringEquals: { 'ec2:CreateAction': 'CreateVolume' } } },
    ],
  };
  let t: TestSim;
  const clients: EC2Client[] = [];
  beforeEach(async () => {
    t = await startTestSim({
      throttling: false,
      iam: {
        principals: { backend: { arn: `arn:aws:sts::${ACCOUNT}:assumed-role/volhook-lambda/api`, accountId: ACCOUNT, policies: [] } },
        roles: { [EC2_ROLE]: { policies: [{ name: 'fenced', document: fenced }], trust: { principals: ['backend'], externalId: 'volhook-ext-1' } } },
      },
    });
  });
  afterEach(async () => {
    clients.splice(0).forEach((c) => c.destroy());
    await t.close();
  });

  const create = (client: EC2Client, cluster: string) =>
    client.send(new CreateVolumeCommand({ AvailabilityZone: 'us-east-1a', Size: 1, TagSpecifications: [{ ResourceType: 'volume', Tags: [{ Key: 'volhook.io/cluster', Value: cluster }] }] }));

  it("c1's session creates c1's volumes and is refused one tagged c2; one AssumeRole for all its calls", async () => {
    const cache = createSessionCache({ endpoint: t.url, credentials: { accessKeyId: 'backend', secretAccessKey: 'x' } });
    const client = new EC2Client({ endpoint: t.url, region: 'us-east-1', credentials: cache.provider({ roleArn: EC2_ROLE, clusterId: 'c1', externalId: 'volhook-ext-1' }), maxAttempts: 1 });
    clients.push(client);
    await create(client, 'c1');
    await create(client, 'c1');
    await expect(create(client, 'c2')).rejects.toMatchObject({ name: 'UnauthorizedOperation' });
    expect(t.sim.volumes().map((v) => v.tags.find((tag) => tag.key === 'volhook.io/cluster')?.value)).toEqual(['c1', 'c1']);
    expect(cache.stats().assumeRoleCalls).toBe(1);
  });

  it('without the ExternalId the role requires -> AssumeRole refused, the EC2 call never made', async () => {
    const cache = createSessionCache({ endpoint: t.url, credentials: { accessKeyId: 'backend', secretAccessKey: 'x' } });
    const client = new EC2Client({ endpoint: t.url, region: 'us-east-1', credentials: cache.provider({ roleArn: EC2_ROLE, clusterId: 'c1' }), maxAttempts: 1 });
    clients.push(client);
    await expect(create(client, 'c1')).rejects.toMatchObject({ kind: 'unauthorized', code: 'AccessDenied' });
    expect(t.sim.volumes()).toEqual([]);
  });
});
