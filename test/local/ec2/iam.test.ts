/**
 * The simulator's IAM over HTTP, as the SDK and the AWS CLI meet it: the access key of the
 * SigV4 signature picks the principal; a denied call is the SDK's UnauthorizedOperation. The
 * backend's key is the Lambda role's (no EC2); its calls run in a session of the deployment's
 * EC2 role, assumed through the simulator's STS with the session tag volhook-cluster.
 */
import { CreateSnapshotCommand, DeleteVolumeCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessKeyOf } from '../../../lib/local/ec2/iam.js';
import { startEc2Simulator, type RunningEc2Simulator } from '../../../lib/local/ec2/index.js';
import { ec2Role, ec2RoleArn, lambdaRolePrincipal } from '../../../lib/iam/role-policy.js';

const BACKEND_KEY = 'volhook-backend-role';
const ROLE_ARN = ec2RoleArn();
let sim: RunningEc2Simulator;
const clients: { destroy(): void }[] = [];
const client = (credentials: { accessKeyId: string; secretAccessKey?: string; sessionToken?: string }) => {
  const c = new EC2Client({ endpoint: sim.url, region: 'us-east-1', credentials: { secretAccessKey: 'x', ...credentials }, maxAttempts: 1 });
  clients.push(c);
  return c;
};

/** The EC2 client of cluster `clusterId`'s session of the EC2 role, as the backend assumes it. */
async function session(clusterId: string): Promise<EC2Client> {
  const sts = new STSClient({ endpoint: sim.url, region: 'us-east-1', credentials: { accessKeyId: BACKEND_KEY, secretAccessKey: 'x' }, maxAttempts: 1 });
  clients.push(sts);
  const out = await sts.send(new AssumeRoleCommand({ RoleArn: ROLE_ARN, RoleSessionName: `volhook-${clusterId}`, Tags: [{ Key: 'volhook-cluster', Value: clusterId }], DurationSeconds: 3600 }));
  const c = out.Credentials!;
  return client({ accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! });
}

beforeAll(async () => {
  sim = await startEc2Simulator({
    seed: 3,
    throttling: false,
    iam: { principals: { [BACKEND_KEY]: lambdaRolePrincipal() }, roles: { [ROLE_ARN]: ec2Role({ trust: { principals: [BACKEND_KEY] } }) } },
  });
});
afterAll(async () => {
  clients.splice(0).forEach((c) => c.destroy());
  await sim.close();
});

const OWN = (cluster: string) => ({ 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': cluster });

describe('EC2 simulator: IAM over HTTP', () => {
  it('the Lambda role’s own key makes no EC2 call, not even a Describe (UnauthorizedOperation)', async () => {
    const err = await client({ accessKeyId: BACKEND_KEY }).send(new DescribeVolumesCommand({})).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'UnauthorizedOperation', $metadata: { httpStatusCode: 403 } });
  });

  it('c1’s session: an untagged disk and c2’s cannot be deleted (UnauthorizedOperation, 403, naming action and resource); c1’s is; the operator’s key deletes the others', async () => {
    const c1 = await session('c1');
    for (const tags of [{}, OWN('c2')]) {
      const [disk] = sim.sim.seedVolumes({ zone: 'us-east-1a', tags });
      const id = disk!.id;
      const err = await c1.send(new DeleteVolumeCommand({ VolumeId: id })).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'UnauthorizedOperation', $metadata: { httpStatusCode: 403 } });
      expect((err as Error).message).toContain(`ec2:DeleteVolume on resource: arn:aws:ec2:us-east-1:123456789012:volume/${id}`);
      expect((err as Error).message).toContain(`assumed-role/volhook-dev-us-east-1-ec2/volhook-c1`);
      expect(sim.sim.volume(id)?.state).toBe('available');
      await client({ accessKeyId: 'operator' }).send(new DeleteVolumeCommand({ VolumeId: id }));
      expect(['deleting', undefined]).toContain(sim.sim.volume(id)?.state);
    }
    const [own] = sim.sim.seedVolumes({ zone: 'us-east-1a', tags: OWN('c1') });
    await c1.send(new DeleteVolumeCommand({ VolumeId: own!.id }));
    expect(['deleting', undefined]).toContain(sim.sim.volume(own!.id)?.state);
  });

  it('c1’s session: a snapshot tagged for c1 is made, an untagged one is refused on the new snapshot’s ARN (no account in it)', async () => {
    const [disk] = sim.sim.seedVolumes({ zone: 'us-east-1a', tags: OWN('c1') });
    const c1 = await session('c1');
    const ok = await c1.send(new CreateSnapshotCommand({ VolumeId: disk!.id, TagSpecifications: [{ ResourceType: 'snapshot', Tags: Object.entries(OWN('c1')).map(([Key, Value]) => ({ Key, Value })) }] }));
    expect(ok.SnapshotId).toMatch(/^snap-/);
    const err = await c1.send(new CreateSnapshotCommand({ VolumeId: disk!.id })).catch((e: unknown) => e);
    expect((err as Error).message).toContain('ec2:CreateSnapshot on resource: arn:aws:ec2:us-east-1::snapshot/*');
  });

  it('reads the access key from the Authorization header or a presigned query', () => {
    expect(accessKeyOf('AWS4-HMAC-SHA256 Credential=AKIDX/20261202/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=0', new URLSearchParams())).toBe('AKIDX');
    expect(accessKeyOf(undefined, new URLSearchParams('X-Amz-Credential=AKIDY%2F20261202%2Fus-east-1%2Fec2%2Faws4_request'))).toBe('AKIDY');
    expect(accessKeyOf(undefined, new URLSearchParams())).toBeUndefined();
  });
});
