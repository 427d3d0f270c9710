/**
 * The simulator's IAM over HTTP, as the SDK and the AWS CLI meet it: the access key of the
 * SigV4 signature picks the principal; a denied call is the SDK's UnauthorizedOperation.
 */
import { CreateSnapshotCommand, DeleteVolumeCommand, EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessKeyOf } from '../../../lib/local/ec2/iam.js';
import { startEc2Simulator, type RunningEc2Simulator } from '../../../lib/local/ec2/index.js';
import { lambdaRolePrincipal } from '../../../lib/iam/role-policy.js';
import { BACKEND_CREDENTIALS } from '../../../lib/local/stack/stack.js';

let sim: RunningEc2Simulator;
const client = (accessKeyId: string) => new EC2Client({ endpoint: sim.url, region: 'us-east-1', credentials: { accessKeyId, secretAccessKey: 'x' }, maxAttempts: 1 });

beforeAll(async () => {
  sim = await startEc2Simulator({ seed: 3, throttling: false, iam: { principals: { [BACKEND_CREDENTIALS.accessKeyId]: lambdaRolePrincipal() } } });
});
afterAll(() => sim.close());

describe('EC2 simulator: IAM over HTTP', () => {
  it('the role’s key: an untagged disk cannot be deleted (UnauthorizedOperation, 403, naming action and resource); the operator’s key deletes it', async () => {
    const [disk] = sim.sim.seedVolumes({ zone: 'us-east-1a' });
    const id = disk!.id;
    const err = await client(BACKEND_CREDENTIALS.accessKeyId).send(new DeleteVolumeCommand({ VolumeId: id })).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'UnauthorizedOperation', $metadata: { httpStatusCode: 403 } });
    expect((err as Error).message).toContain(`ec2:DeleteVolume on resource: arn:aws:ec2:us-east-1:123456789012:volume/${id}`);
    expect(sim.sim.volume(id)?.state).toBe('available');
    await client('operator').send(new DeleteVolumeCommand({ VolumeId: id }));
    expect(['deleting', undefined]).toContain(sim.sim.volume(id)?.state);
  });

  it('the role’s key: a snapshot tagged for the scope is made, an untagged one is refused on the new snapshot’s ARN (no account in it)', async () => {
    const [disk] = sim.sim.seedVolumes({ zone: 'us-east-1a', tags: { 'ebs.csi.aws.com/cluster': 'true' } });
    const role = client(BACKEND_CREDENTIALS.accessKeyId);
    const ok = await role.send(new CreateSnapshotCommand({ VolumeId: disk!.id, TagSpecifications: [{ ResourceType: 'snapshot', Tags: [{ Key: 'ebs.csi.aws.com/cluster', Value: 'true' }] }] }));
    expect(ok.SnapshotId).toMatch(/^snap-/);
    const err = await role.send(new CreateSnapshotCommand({ VolumeId: disk!.id })).catch((e: unknown) => e);
    expect((err as Error).message).toContain('ec2:CreateSnapshot on resource: arn:aws:ec2:us-east-1::snapshot/*');
  });

  it('reads the access key from the Authorization header or a presigned query', () => {
    expect(accessKeyOf('AWS4-HMAC-SHA256 Credential=AKIDX/20261202/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=0', new URLSearchParams())).toBe('AKIDX');
    expect(accessKeyOf(undefined, new URLSearchParams('X-Amz-Credential=AKIDY%2F20261202%2Fus-east-1%2Fec2%2Faws4_request'))).toBe('AKIDY');
    expect(accessKeyOf(undefined, new URLSearchParams())).toBeUndefined();
  });
});
