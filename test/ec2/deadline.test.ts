import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AttachVolumeCommand,
  DescribeVolumesCommand,
  EC2Client,
  type EC2ClientResolvedConfig,
  type ServiceInputTypes,
  type ServiceOutputTypes,
} from '@aws-sdk/client-ec2';
import { mockClient, type AwsStub } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEc2Client, createEc2Gateway, Ec2Error } from '../../lib/ec2/index.js';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };
const hang = () => new Promise<never>(() => {});

describe('deadline over a mocked client', () => {
  let ec2: AwsStub<ServiceInputTypes, ServiceOutputTypes, EC2ClientResolvedConfig>;
  const client = new EC2Client({ region: 'us-east-1' });
  beforeAll(() => {
    ec2 = mockClient(EC2Client);
  });
  afterAll(() => ec2.restore());
  beforeEach(() => ec2.reset());

  it('a call hanging past the deadline -> transient Ec2Error soon after the deadline', async () => {
    ec2.on(AttachVolumeCommand).callsFake(hang);
    const started = Date.now();
    const gw = createEc2Gateway({ client, clusterId: 'c1', deadline: started + 100 });
    const err = await gw.attachDisk('vol-0aaaaaaaaaaaaaaa1', 'i-0bbbbbbbbbbbbbbb1', '/dev/xvdaa').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Ec2Error);
    expect(err).toMatchObject({ kind: 'transient', code: 'DeadlineExceeded', action: 'AttachVolume' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a batch whose describe hangs -> every look-up in it fails transient', async () => {
    ec2.on(DescribeVolumesCommand).callsFake(hang);
    const gw = createEc2Gateway({ client, clusterId: 'c1', deadline: Date.now() + 100 });
    const results = await Promise.allSettled([gw.getDisk('vol-01'), gw.findDiskByName('pvc-1'), gw.getDisk('vol-02')]);
    expect(results.map((r) => r.status === 'rejected' && r.reason.code)).toEqual(['DeadlineExceeded', 'DeadlineExceeded', 'DeadlineExceeded']);
  });

  it('deadline already passed -> transient at once, EC2 not called', async () => {
    const gw = createEc2Gateway({ client, clusterId: 'c1', deadline: Date.now() - 1 });
    await expect(gw.deleteDisk('vol-0aaaaaaaaaaaaaaa1')).rejects.toMatchObject({ kind: 'transient', code: 'DeadlineExceeded' });
    expect(ec2.calls()).toHaveLength(0);
  });

  it('a call answering before the deadline -> its answer', async () => {
    ec2.on(AttachVolumeCommand).resolves({ State: 'attaching' });
    const gw = createEc2Gateway({ client, clusterId: 'c1', deadline: Date.now() + 5_000 });
    expect(await gw.attachDisk('vol-0aaaaaaaaaaaaaaa1', 'i-0bbbbbbbbbbbbbbb1', '/dev/xvdaa')).toBe('attaching');
  });
});

describe('deadline over a real client and a silent server', () => {
  let server: Server;
  let url: string;
  let requests: Array<{ closed: Promise<unknown> }>;
  beforeEach(async () => {
    requests = [];
    // Never answers; notes when the client goes away.
    server = createServer((req, res) => {
      req.on('error', () => {});
      requests.push({ closed: once(res, 'close') });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    server.close();
  });

  it('no answer before the deadline -> transient DeadlineExceeded, and the request is aborted on the wire', async () => {
    const client = createEc2Client({ region: 'us-east-1', endpoint: url, credentials, requestTimeoutMs: 10_000 });
    const started = Date.now();
    const gw = createEc2Gateway({ client, clusterId: 'c1', deadline: started + 300 });
    await expect(gw.getDisk('vol-0aaaaaaaaaaaaaaa1')).rejects.toMatchObject({ kind: 'transient', code: 'DeadlineExceeded' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(requests).toHaveLength(1);
    const closedSoon = await Promise.race([requests[0]!.closed.then(() => true), new Promise((r) => setTimeout(() => r(false), 1_000))]);
    expect(closedSoon).toBe(true);
  });
});
