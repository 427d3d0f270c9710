import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEc2Client, createEc2Gateway, Ec2Error } from '../../lib/ec2/index.js';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

/** EC2 Query XML, as EC2 answers. */
const errorXml = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>${code}</Code><Message>${message}</Message></Error></Errors><RequestID>req-1</RequestID></Response>`;
const volumesXml = (...ids: string[]) =>
  `<DescribeVolumesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>req-1</requestId><volumeSet>${ids
    .map((id) => `<item><volumeId>${id}</volumeId><size>4</size><availabilityZone>us-east-1a</availabilityZone><status>available</status><volumeType>gp3</volumeType></item>`)
    .join('')}</volumeSet></DescribeVolumesResponse>`;
const throttled = { status: 503, body: errorXml('RequestLimitExceeded', 'Request limit exceeded.') };

/**
 * A transport that answers from a script, so the real SDK stack (signing, retries, XML
 * parsing) runs without a network.
 */
function scripted(answers: Array<{ status: number; body: string }>) {
  const seen: string[] = [];
  const handler = {
    async handle(request: { body?: unknown }) {
      seen.push(String(request.body));
      const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
      return { response: { statusCode: answer.status, headers: {}, body: new TextEncoder().encode(answer.body) } };
    },
  };
  return { handler, seen };
}

/** Runs `promise` with the SDK's back-off sleeps on fake time, so a retry takes no real second. */
async function onFakeTime<T>(start: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  try {
    let settled = false;
    const promise = start().finally(() => (settled = true));
    promise.catch(() => {});
    for (let step = 0; !settled && step < 10_000; step++) await vi.advanceTimersByTimeAsync(50);
    return await promise;
  } finally {
    vi.useRealTimers();
  }
}

describe('createEc2Client', () => {
  it('defaults -> standard retries (no shared client-side limiter) and 3 attempts', async () => {
    const client = createEc2Client({ region: 'eu-west-1' });
    expect(await client.config.retryStrategy()).toMatchObject({ mode: 'standard' });
    expect(await client.config.maxAttempts()).toBe(3);
    expect(await client.config.region()).toBe('eu-west-1');
  });

  it('RequestLimitExceeded twice, then an answer -> resolves after three attempts', async () => {
    const { handler, seen } = scripted([throttled, throttled, { status: 200, body: volumesXml('vol-0aaaaaaaaaaaaaaa1') }]);
    const client = createEc2Client({ region: 'us-east-1', credentials, requestHandler: handler });
    const disk = await onFakeTime(() => createEc2Gateway({ client, clusterId: 'c1' }).getDisk('vol-0aaaaaaaaaaaaaaa1'));
    expect(disk).toMatchObject({ volumeId: 'vol-0aaaaaaaaaaaaaaa1', sizeGiB: 4, state: 'available' });
    expect(seen).toHaveLength(3);
  });

  it('throttled on every attempt -> transient Ec2Error after maxAttempts attempts', async () => {
    const { handler, seen } = scripted([throttled]);
    const client = createEc2Client({ region: 'us-east-1', credentials, requestHandler: handler, maxAttempts: 4 });
    const err = await onFakeTime(() =>
      createEc2Gateway({ client, clusterId: 'c1' }).getDisk('vol-0aaaaaaaaaaaaaaa1').catch((e: unknown) => e),
    );
    expect(err).toBeInstanceOf(Ec2Error);
    expect(err).toMatchObject({ kind: 'transient', code: 'RequestLimitExceeded', action: 'DescribeVolumes' });
    expect(seen).toHaveLength(4);
  });

  it('a parameter error -> no retry, invalidParameter', async () => {
    const { handler, seen } = scripted([{ status: 400, body: errorXml('InvalidParameterValue', 'Value (gp9) for parameter volumeType is invalid.') }]);
    const client = createEc2Client({ region: 'us-east-1', credentials, requestHandler: handler });
    await expect(client.send(new DescribeVolumesCommand({}))).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    expect(seen).toHaveLength(1);
  });

  it('EC2 XML naming unknown volumes -> parsed code and IDs: those undefined, the rest found', async () => {
    const { handler, seen } = scripted([
      { status: 400, body: errorXml('InvalidVolume.NotFound', "The volumes 'vol-0ffffffffffffff01,vol-0ffffffffffffff02' do not exist.") },
      { status: 200, body: volumesXml('vol-0aaaaaaaaaaaaaaa1') },
    ]);
    const client = createEc2Client({ region: 'us-east-1', credentials, requestHandler: handler });
    const gw = createEc2Gateway({ client, clusterId: 'c1' });
    const disks = await Promise.all(['vol-0ffffffffffffff01', 'vol-0aaaaaaaaaaaaaaa1', 'vol-0ffffffffffffff02'].map((id) => gw.getDisk(id)));
    expect(disks.map((d) => d?.volumeId)).toEqual([undefined, 'vol-0aaaaaaaaaaaaaaa1', undefined]);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toContain('VolumeId.1=vol-0aaaaaaaaaaaaaaa1');
    expect(seen[1]).not.toContain('VolumeId.2');
  });
});

describe('createEc2Client over the network', () => {
  let server: Server | undefined;
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
    server = undefined;
  });

  it('defaults -> the HTTP handler has 5 s request and 1 s connection timeouts that throw', async () => {
    server = createServer((_req, res) => res.end(volumesXml('vol-0aaaaaaaaaaaaaaa1')));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = createEc2Client({ region: 'us-east-1', endpoint, credentials });
    expect((await createEc2Gateway({ client, clusterId: 'c1' }).getDisk('vol-0aaaaaaaaaaaaaaa1'))?.sizeGiB).toBe(4);
    // The handler resolves its options lazily, so they are readable after the first call.
    const handler = client.config.requestHandler as unknown as { httpHandlerConfigs(): object };
    expect(handler.httpHandlerConfigs()).toMatchObject({
      requestTimeout: 5_000,
      connectionTimeout: 1_000,
      throwOnRequestTimeout: true,
    });
  });

  it('a server silent past requestTimeout -> transient ETIMEDOUT, not a hang', async () => {
    server = createServer((req) => void req.on('error', () => {}));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = createEc2Client({ region: 'us-east-1', endpoint, credentials, maxAttempts: 1, requestTimeoutMs: 100 });
    const started = Date.now();
    await expect(createEc2Gateway({ client, clusterId: 'c1' }).deleteDisk('vol-0aaaaaaaaaaaaaaa1')).rejects.toMatchObject({
      kind: 'transient',
      code: 'ETIMEDOUT',
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('nothing listening -> transient ECONNREFUSED', async () => {
    server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    server.close();
    const client = createEc2Client({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials, maxAttempts: 1 });
    await expect(createEc2Gateway({ client, clusterId: 'c1' }).deleteDisk('vol-0aaaaaaaaaaaaaaa1')).rejects.toMatchObject({
      kind: 'transient',
      code: 'ECONNREFUSED',
    });
  });
});
