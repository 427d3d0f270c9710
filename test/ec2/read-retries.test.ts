/**
 * A read EC2 fails as it sometimes does (5xx, a cut connection) is tried again in the request,
 * a budget token each time, instead of sending every item that read was for back to the
 * forwarder; a throttle, a mutation and a deadline are not (aws-sdk-client-mock, one SDK
 * attempt as the backend makes them).
 */
import { CreateVolumeCommand, DescribeVolumesCommand, EC2Client, EC2ServiceException } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryBudget } from '../../lib/budget/index.js';
import { READ_RETRY_DELAYS_MS, readRetryDelayMs } from '../../lib/ec2/call.js';
import { createEc2Gateway, Ec2CallStats } from '../../lib/ec2/index.js';
import { deadlineExceeded } from '../../lib/ec2/errors.js';
import { Ec2Error } from '../../lib/ec2/types.js';

const ec2 = mockClient(EC2Client);
afterAll(() => ec2.restore());
beforeEach(() => ec2.reset());

const client = new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 's' }, maxAttempts: 1 });
const VOLUME = { VolumeId: 'vol-0123456789abcdef0', AvailabilityZone: 'us-east-1a', Size: 4, State: 'available' as const, VolumeType: 'gp3' as const, Attachments: [] };

function serverError(code: string, status: number): EC2ServiceException {
  return new EC2ServiceException({ name: code, $fault: status >= 500 ? 'server' : 'client', $metadata: { httpStatusCode: status }, message: `${code} (test)` });
}

function gateway(stats: Ec2CallStats, deadline?: number) {
  const budget = createMemoryBudget();
  return createEc2Gateway({ client, clusterId: 'c1', batchWindowMs: 0, observer: stats, pacing: { budget, account: '111122223333', region: 'us-east-1' }, ...(deadline !== undefined && { deadline }) });
}

describe('a failed read, tried again in the request', () => {
  it('DescribeVolumes InternalError, then an answer -> the disk, two calls and two tokens', async () => {
    ec2.on(DescribeVolumesCommand).rejectsOnce(serverError('InternalError', 500)).resolves({ Volumes: [VOLUME] });
    const stats = new Ec2CallStats();
    const disk = await gateway(stats).getDisk(VOLUME.VolumeId);
    expect(disk?.volumeId).toBe(VOLUME.VolumeId);
    expect(ec2.commandCalls(DescribeVolumesCommand)).toHaveLength(2);
    expect(stats.actions.get('DescribeVolumes')).toMatchObject({ calls: 2, tokensGranted: 2 });
  });

  it('Unavailable three times -> given up after the two retries, the error the caller gets is transient', async () => {
    ec2.on(DescribeVolumesCommand).rejects(serverError('Unavailable', 503));
    const error = await gateway(new Ec2CallStats()).getDisk(VOLUME.VolumeId).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Ec2Error);
    expect((error as Ec2Error).kind).toBe('transient');
    expect(ec2.commandCalls(DescribeVolumesCommand)).toHaveLength(1 + READ_RETRY_DELAYS_MS.length);
  });

  it('DescribeVolumes throttled -> not tried again here: the budget slows down instead', async () => {
    ec2.on(DescribeVolumesCommand).rejectsOnce(serverError('RequestLimitExceeded', 503)).resolves({ Volumes: [VOLUME] });
    await expect(gateway(new Ec2CallStats()).getDisk(VOLUME.VolumeId)).rejects.toMatchObject({ kind: 'transient', code: 'RequestLimitExceeded' });
    expect(ec2.commandCalls(DescribeVolumesCommand)).toHaveLength(1);
  });

  it('CreateVolume InternalError -> not tried again here: a mutation waits for the reconcile to read first', async () => {
    ec2.on(DescribeVolumesCommand).resolves({ Volumes: [] });
    ec2.on(CreateVolumeCommand).rejectsOnce(serverError('InternalError', 500)).resolves(VOLUME);
    await expect(gateway(new Ec2CallStats()).createDisk({ name: 'pvc-1', zone: 'us-east-1a', sizeGiB: 4, type: 'gp3', tags: {} })).rejects.toMatchObject({ kind: 'transient', code: 'InternalError' });
    expect(ec2.commandCalls(CreateVolumeCommand)).toHaveLength(1);
  });

  it('a retry that would pass the request deadline -> not made', async () => {
    ec2.on(DescribeVolumesCommand).rejectsOnce(serverError('InternalError', 500)).resolves({ Volumes: [VOLUME] });
    await expect(gateway(new Ec2CallStats(), Date.now() + 50).getDisk(VOLUME.VolumeId)).rejects.toMatchObject({ code: 'InternalError' });
    expect(ec2.commandCalls(DescribeVolumesCommand)).toHaveLength(1);
  });
});

describe('readRetryDelayMs', () => {
  const transient = (code: string) => new Ec2Error('transient', code, code);
  it.each<[string, string, unknown, number, number | undefined]>([
    ['a read, InternalError, first retry', 'DescribeVolumes', transient('InternalError'), 0, READ_RETRY_DELAYS_MS[0]],
    ['a read, a cut connection, second retry', 'DescribeInstances', transient('ECONNRESET'), 1, READ_RETRY_DELAYS_MS[1]],
    ['a read, a third retry', 'DescribeVolumes', transient('InternalError'), 2, undefined],
    ['a read, throttled', 'DescribeVolumes', transient('RequestLimitExceeded'), 0, undefined],
    ['a read, the deadline', 'DescribeVolumes', deadlineExceeded('DescribeVolumes'), 0, undefined],
    ['a read, refused for good', 'DescribeVolumes', new Ec2Error('unauthorized', 'UnauthorizedOperation', 'no'), 0, undefined],
    ['a mutation, InternalError', 'AttachVolume', transient('InternalError'), 0, undefined],
    ['not an Ec2Error', 'DescribeVolumes', new Error('bug'), 0, undefined],
  ])('%s -> %s', (_case, action, error, retry, delay) => {
    expect(readRetryDelayMs(action, error, retry)).toBe(delay);
  });
});
