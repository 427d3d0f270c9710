/**
 * gzip'd request bodies through the real app (lib/contract/body-encoding.ts): a gzip'd request
 * acts exactly as its plain twin; a body that decodes past MAX_DECODED_REQUEST_BYTES (a zip
 * bomb), a coding the backend does not take and corrupt gzip are refused before anything is
 * looked up, verified, recorded or called (but the refusal the audit counts); every answer says
 * `Accept-Encoding: gzip`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CreateVolumeCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import type { LambdaEvent } from 'hono/aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { canonicalReport, MAX_DECODED_REQUEST_BYTES, MAX_REQUEST_BYTES, reportDigest, sign, type ForwarderVersions } from '../../lib/contract/index.js';
import { createMemoryReportStore, type ReportStore } from '../../lib/reports/index.js';
import { createMemoryReplayStore, type ReplayStore } from '../../lib/replay/index.js';
import { createStaticRegistry, type ClusterRegistry } from '../../lib/registry/index.js';
import { CREATING_VOLUME, fixtureBody, makeApp, registration, SECRET_C1, signedRequest } from './harness.js';
import { bigReport, incompressible } from '../contract/big-report.js';

const PATH = '/v1/clusters/c1/reconcile';
const CHECK_PATH = '/v1/clusters/c1/check';
const CURRENT: ForwarderVersions = { contract: 2, forwarderVersion: '0.2.0' };

interface ErrorBody {
  error?: { code: string; message: string };
}

/** The harness's app, with the registry reads and the webhook ids recorded counted; EC2 as for a claim whose disk is being made. */
function harness(registry: ClusterRegistry = createStaticRegistry([registration('c1', SECRET_C1)])) {
  const reads: string[] = [];
  const counted: ClusterRegistry = {
    get: (clusterId) => {
      reads.push(clusterId);
      return registry.get(clusterId);
    },
  };
  const memory = createMemoryReplayStore();
  const recorded: string[] = [];
  const replay: ReplayStore = {
    recordOnce: (key, expiresAt, now) => {
      recorded.push(key);
      return memory.recordOnce(key, expiresAt, now);
    },
  };
  // Every call of the report store that writes, by name.
  const reportStore = createMemoryReportStore();
  const written: string[] = [];
  const reports = new Proxy(reportStore, {
    get: (target, name: keyof ReportStore) => {
      const method = target[name];
      if (typeof method !== 'function') return method;
      return (...args: unknown[]) => {
        if (name !== 'get' && name !== 'parts') written.push(name);
        return (method as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  const { app, ec2Mock } = makeApp({ registry: counted, replay, reports });
  ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
  ec2Mock.on(CreateVolumeCommand).resolves(CREATING_VOLUME);
  const send = async (path: string, init: RequestInit) => {
    const res = await app.request(path, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as ErrorBody & Record<string, unknown> };
  };
  return { app, ec2Mock, send, reads, recorded, reports: reportStore, written };
}

/** A signed request (signed over `signedBody`, the JSON) whose body is `wire` with `Content-Encoding: coding`. */
function encoded(path: string, signedBody: string, wire: Uint8Array, coding: string, options: { versions?: ForwarderVersions } = {}): RequestInit {
  const { path: _path, ...init } = signedRequest(path, signedBody, SECRET_C1, { versions: options.versions ?? CURRENT, headers: { 'content-encoding': coding } });
  return { ...init, body: wire };
}

function plain(path: string, body: string): RequestInit {
  const { path: _path, ...init } = signedRequest(path, body, SECRET_C1, { versions: CURRENT });
  return init;
}

/** EC2 calls as the mock saw them: the command and its input. */
const ec2Calls = (h: Harness) => h.ec2Mock.calls().map((call) => [call.args[0].constructor.name, call.args[0].input]);

type Harness = ReturnType<typeof harness>;
const harnesses: Harness[] = [];
function fresh(registry?: ClusterRegistry): Harness {
  const h = harness(registry);
  harnesses.push(h);
  return h;
}
afterEach(() => {
  for (const h of harnesses.splice(0)) h.ec2Mock.restore();
  vi.restoreAllMocks();
});

describe('a gzip\'d signed request', () => {
  it('reconcile, gzip\'d -> 200 with exactly the answer and the EC2 calls of its plain twin', async () => {
    // One app after the other: aws-sdk-client-mock mocks EC2Client for the whole process.
    const plainSide = fresh();
    const asIs = await plainSide.send(PATH, plain(PATH, fixtureBody));
    const plainCalls = ec2Calls(plainSide);
    plainSide.ec2Mock.restore();
    const gzipSide = fresh();
    const compressed = gzipSync(fixtureBody);
    expect(compressed.length).toBeLessThan(Buffer.byteLength(fixtureBody));
    const gzipped = await gzipSide.send(PATH, encoded(PATH, fixtureBody, compressed, 'gzip'));

    expect(asIs.status).toBe(200);
    expect(plainCalls.length).toBeGreaterThan(0);
    expect(gzipped.status).toBe(asIs.status);
    expect(gzipped.body).toEqual(asIs.body);
    expect((gzipped.body.results as unknown[]).length).toBeGreaterThan(0);
    expect(ec2Calls(gzipSide)).toEqual(plainCalls);
    expect(gzipSide.ec2Mock).toHaveReceivedCommand(CreateVolumeCommand);
    // Looked up and recorded as the plain one is: once each.
    expect(gzipSide.reads).toEqual(['c1']);
    expect(gzipSide.recorded).toHaveLength(1);
  });

  it('x-gzip and GZIP are gzip too; the check route takes a gzip\'d body as well', async () => {
    const h = fresh();
    expect((await h.send(PATH, encoded(PATH, fixtureBody, gzipSync(fixtureBody), 'x-gzip'))).status).toBe(200);
    expect((await h.send(PATH, encoded(PATH, fixtureBody, gzipSync(fixtureBody), 'GZIP'))).status).toBe(200);
    const check = JSON.stringify({ clusterId: 'c1' });
    const checked = await h.send(CHECK_PATH, encoded(CHECK_PATH, check, gzipSync(check), 'gzip'));
    expect(checked.status).toBe(200);
    expect(checked.body).toEqual({ clusterId: 'c1', accepted: true, serves: ['groupSnapshots'] });
  });

  it('the signature is over the decoded body: signed over the gzip bytes instead -> 401, nothing recorded, no EC2 call; control: signed over the JSON -> 200', async () => {
    const h = fresh();
    const compressed = gzipSync(fixtureBody);
    const { path: _p, ...init } = signedRequest(PATH, compressed.toString('latin1'), SECRET_C1, { versions: CURRENT, headers: { 'content-encoding': 'gzip' } });
    const refused = await h.send(PATH, { ...init, body: compressed });
    expect(refused.status).toBe(401);
    expect(refused.body.error?.code).toBe('bad_signature');
    expect(h.recorded).toEqual([]);
    expect(h.ec2Mock.calls()).toEqual([]);
    expect((await h.send(PATH, encoded(PATH, fixtureBody, compressed, 'gzip'))).status).toBe(200);
  });

  it('a signed gzip\'d body tampered with after signing (re-compressed with a larger disk) -> 401 bad_signature, nothing recorded, no EC2 call; control: the body as signed -> 200', async () => {
    const h = fresh();
    const { path: _p, ...init } = signedRequest(PATH, fixtureBody, SECRET_C1, { versions: CURRENT, headers: { 'content-encoding': 'gzip' } });
    const tampered = fixtureBody.replace('20Gi', '2000Gi');
    expect(tampered).not.toBe(fixtureBody);
    // Valid gzip of valid JSON, the signature headers of the body before: only the signature can tell.
    const refused = await h.send(PATH, { ...init, body: gzipSync(tampered) });
    expect(refused.status).toBe(401);
    expect(refused.body.error?.code).toBe('bad_signature');
    expect(h.recorded).toEqual([]);
    expect(h.ec2Mock.calls()).toEqual([]);
    // A byte of the gzip stream's data flipped: corrupt gzip (its CRC-32 no longer matches) -> 400, before the signature.
    const flipped = Buffer.from(gzipSync(fixtureBody));
    flipped[20] = (flipped[20] as number) ^ 0xff;
    const corrupt = await h.send(PATH, { ...init, body: flipped });
    expect([corrupt.status, corrupt.body.error?.code]).toEqual([400, 'bad_encoding']);
    expect(h.recorded).toEqual([]);
    expect(h.ec2Mock.calls()).toEqual([]);
    const asSigned = await h.send(PATH, { ...init, body: gzipSync(fixtureBody) });
    expect(asSigned.status).toBe(200);
    expect(h.recorded).toHaveLength(1);
    expect(h.ec2Mock).toHaveReceivedCommand(CreateVolumeCommand);
  });

  it('a body over MAX_REQUEST_BYTES as JSON, gzip\'d well under it -> taken (the wire bound is on the bytes that come); control: the same body plain -> 413', async () => {
    const h = fresh();
    const body = JSON.stringify({ clusterId: 'c1', padding: 'x'.repeat(2 * MAX_REQUEST_BYTES) });
    const compressed = gzipSync(body);
    expect(compressed.length).toBeLessThan(MAX_REQUEST_BYTES);
    const taken = await h.send(CHECK_PATH, encoded(CHECK_PATH, body, compressed, 'gzip'));
    expect(taken.status).toBe(200);
    expect(taken.body).toEqual({ clusterId: 'c1', accepted: true, serves: ['groupSnapshots'] });
    const tooLarge = await h.send(CHECK_PATH, plain(CHECK_PATH, body));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error?.code).toBe('body_too_large');
  });

  it('gzip\'d bytes themselves over MAX_REQUEST_BYTES -> 413 before decoding, nothing looked up; control: the same content under it -> 200', async () => {
    const h = fresh();
    const big = JSON.stringify({ clusterId: 'c1', padding: incompressible(2 * MAX_REQUEST_BYTES) });
    const compressed = gzipSync(big);
    expect(compressed.length).toBeGreaterThan(MAX_REQUEST_BYTES);
    const refused = await h.send(CHECK_PATH, encoded(CHECK_PATH, big, compressed, 'gzip'));
    expect(refused.status).toBe(413);
    expect(refused.body.error?.message).toContain(`exceeds ${MAX_REQUEST_BYTES} bytes`);
    expect(h.reads).toEqual([]);
    const small = JSON.stringify({ clusterId: 'c1', padding: incompressible(MAX_REQUEST_BYTES / 2) });
    expect((await h.send(CHECK_PATH, encoded(CHECK_PATH, small, gzipSync(small), 'gzip'))).status).toBe(200);
  });
});

describe('gzip\'d bodies refused before any work', () => {
  it('a zip bomb (16 MiB decoded, a few KB sent) with a valid signature -> 413 body_too_large: no registry read, no webhook id recorded, no EC2 call; control: the same request plain-sized -> 200', async () => {
    const h = fresh();
    // A reconcile body of 16 MiB that compresses to almost nothing, signed over what it decodes to.
    const decoded = `{"clusterId":"c1","items":[],"padding":"${' '.repeat(16 * 1024 * 1024)}"}`;
    expect(Buffer.byteLength(decoded)).toBeGreaterThan(MAX_DECODED_REQUEST_BYTES);
    const bomb = gzipSync(decoded);
    expect(bomb.length).toBeLessThan(64 * 1024);
    const refused = await h.send(PATH, encoded(PATH, decoded, bomb, 'gzip'));
    expect(refused.status).toBe(413);
    expect(refused.body.error?.code).toBe('body_too_large');
    expect(refused.body.error?.message).toContain(String(MAX_DECODED_REQUEST_BYTES));
    expect(refused.headers.get('accept-encoding')).toBe('gzip');
    expect(h.reads).toEqual([]);
    expect(h.recorded).toEqual([]);
    expect(h.ec2Mock.calls()).toEqual([]);

    // Control: the same path, the same kind of body just under the bound, gzip'd and plain -> on to the registry, the replay store and EC2.
    const under = fixtureBody.replace(/\}\s*$/, `, "padding": "${' '.repeat(MAX_DECODED_REQUEST_BYTES - Buffer.byteLength(fixtureBody) - 100)}"}`);
    expect(Buffer.byteLength(under)).toBeLessThanOrEqual(MAX_DECODED_REQUEST_BYTES);
    expect(Buffer.byteLength(under)).toBeGreaterThan(MAX_DECODED_REQUEST_BYTES - 1024);
    const accepted = await h.send(PATH, encoded(PATH, under, gzipSync(under), 'gzip'));
    expect(accepted.status).toBe(200);
    expect(h.reads).toEqual(['c1']);
    expect(h.recorded).toHaveLength(1);
    expect(h.ec2Mock).toHaveReceivedCommand(CreateVolumeCommand);
    expect((await h.send(PATH, plain(PATH, fixtureBody))).status).toBe(200);
    expect(h.reads).toEqual(['c1', 'c1']);
  });

  it('a volume report zip bomb -> 413: no report, part or event written, no registry read, no webhook id, only the refusal the audit counts (lib/reports/refusals.ts); control: the report gzip\'d within the bound -> kept', async () => {
    const h = fresh();
    const item = (n: number) => {
      const report = bigReport(n);
      return { kind: 'VolumeReport', digest: reportDigest(canonicalReport(report)), observedAt: Date.now(), report };
    };
    const bombOf = (it: unknown) => `{"clusterId":"c1","items":[${JSON.stringify(it)}],"padding":"${' '.repeat(MAX_DECODED_REQUEST_BYTES)}"}`;

    // No report kept yet: the bomb writes nothing at all.
    const first = await h.send(PATH, encoded(PATH, bombOf(item(4)), gzipSync(bombOf(item(4))), 'gzip'));
    expect(first.status).toBe(413);
    expect(first.body.error?.code).toBe('body_too_large');
    expect(await h.reports.get('c1')).toBeUndefined();
    expect(h.reads).toEqual([]);
    expect(h.recorded).toEqual([]);

    // Control: a report gzip'd within the bound -> kept.
    const kept = item(3);
    const body = JSON.stringify({ clusterId: 'c1', items: [kept] });
    const answer = await h.send(PATH, encoded(PATH, body, gzipSync(body), 'gzip'));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ results: [{ outcome: 'done' }] });
    expect(h.written).toContain('put');
    const held = await h.reports.get('c1');
    expect(held?.digest).toBe(kept.digest);

    // A bomb carrying another report: the kept one stays as it was; the store is told of the refusal only.
    h.written.splice(0);
    const bomb = bombOf(item(5));
    const refused = await h.send(PATH, encoded(PATH, bomb, gzipSync(bomb), 'gzip'));
    expect(refused.status).toBe(413);
    expect(h.written).toEqual(['refused']);
    expect(await h.reports.get('c1')).toMatchObject({ digest: kept.digest, observedAt: held?.observedAt });
    expect(h.reads).toEqual(['c1']);
    expect(h.recorded).toHaveLength(1);
  });

  it('Content-Encoding br -> 415 unsupported_encoding with Accept-Encoding: gzip, nothing looked up or recorded; control: the same content gzip\'d -> 200', async () => {
    const h = fresh();
    const refused = await h.send(PATH, encoded(PATH, fixtureBody, gzipSync(fixtureBody), 'br'));
    expect(refused.status).toBe(415);
    expect(refused.body.error?.code).toBe('unsupported_encoding');
    expect(refused.body.error?.message).toContain('"br"');
    expect(refused.headers.get('accept-encoding')).toBe('gzip');
    expect(h.reads).toEqual([]);
    expect(h.recorded).toEqual([]);
    expect(h.ec2Mock.calls()).toEqual([]);
    expect((await h.send(PATH, encoded(PATH, fixtureBody, gzipSync(fixtureBody), 'gzip'))).status).toBe(200);
    expect(h.reads).toEqual(['c1']);
  });

  it('corrupt gzip -> 400 bad_encoding, nothing looked up or recorded; control: the intact bytes -> 200', async () => {
    const h = fresh();
    const compressed = gzipSync(fixtureBody);
    const cut = compressed.subarray(0, compressed.length - 10);
    const refused = await h.send(PATH, encoded(PATH, fixtureBody, cut, 'gzip'));
    expect(refused.status).toBe(400);
    expect(refused.body.error?.code).toBe('bad_encoding');
    expect(h.reads).toEqual([]);
    expect(h.recorded).toEqual([]);
    expect(h.ec2Mock.calls()).toEqual([]);
    // Plain JSON that says it is gzip'd is corrupt gzip too.
    expect((await h.send(PATH, encoded(PATH, fixtureBody, Buffer.from(fixtureBody), 'gzip'))).status).toBe(400);
    expect((await h.send(PATH, encoded(PATH, fixtureBody, compressed, 'gzip'))).status).toBe(200);
  });

  it('an unserved contract is refused (426) before the body is decoded: a zip bomb of contract 99 costs no decoding either', async () => {
    const h = fresh();
    const decoded = `{"clusterId":"c1","items":[],"padding":"${' '.repeat(16 * 1024 * 1024)}"}`;
    const refused = await h.send(PATH, encoded(PATH, decoded, gzipSync(decoded), 'gzip', { versions: { contract: 99, forwarderVersion: '9.0.0' } }));
    expect(refused.status).toBe(426);
    expect(refused.headers.get('accept-encoding')).toBe('gzip');
    expect(h.reads).toEqual([]);
  });
});

describe('every answer says Accept-Encoding: gzip', () => {
  it('200s, 4xx of every stage, and a 500', async () => {
    const h = fresh();
    const answers: { what: string; status: number; headers: Headers }[] = [];
    const note = async (what: string, path: string, init: RequestInit) => {
      const res = await h.app.request(path, init);
      answers.push({ what, status: res.status, headers: res.headers });
    };
    await note('healthz', '/healthz', { method: 'GET' });
    await note('reconcile', PATH, plain(PATH, fixtureBody));
    await note('check', CHECK_PATH, plain(CHECK_PATH, JSON.stringify({ clusterId: 'c1' })));
    await note('no route', '/nope', { method: 'GET' });
    await note('bad cluster id', '/v1/clusters/NOT_VALID!/reconcile', plain('/v1/clusters/NOT_VALID!/reconcile', fixtureBody));
    await note('bad signature', PATH, { ...plain(PATH, fixtureBody), body: fixtureBody.replace('20Gi', '2000Gi') });
    await note('unknown cluster', '/v1/clusters/c9/reconcile', plain('/v1/clusters/c9/reconcile', fixtureBody.replace('"clusterId": "c1"', '"clusterId": "c9"')));
    await note('malformed json', PATH, plain(PATH, '{"clusterId":'));
    await note('body too large', PATH, plain(PATH, 'x'.repeat(MAX_REQUEST_BYTES + 1)));

    vi.spyOn(console, 'error').mockImplementation(() => {});
    const broken = fresh({
      get: async () => {
        throw new Error('the registry is down');
      },
    });
    const res = await broken.app.request(PATH, plain(PATH, fixtureBody));
    answers.push({ what: 'internal', status: res.status, headers: res.headers });

    expect(answers.map((a) => [a.what, a.status])).toEqual([
      ['healthz', 200],
      ['reconcile', 200],
      ['check', 200],
      ['no route', 404],
      ['bad cluster id', 400],
      ['bad signature', 401],
      ['unknown cluster', 404],
      ['malformed json', 400],
      ['body too large', 413],
      ['internal', 500],
    ]);
    for (const answer of answers) expect([answer.what, answer.headers.get('accept-encoding')]).toEqual([answer.what, 'gzip']);
  });
});

describe('the Lambda handler (API Gateway HTTP API v2)', () => {
  type Handler = (event: LambdaEvent) => Promise<{ statusCode: number; body: string; headers?: Record<string, string>; isBase64Encoded: boolean }>;

  /** An HTTP API v2 event whose body is `bytes`, base64'd as API Gateway passes a binary body (test/app/lambda-parity.test.ts). */
  function event(path: string, headers: Record<string, string>, bytes: Uint8Array): LambdaEvent {
    return {
      version: '2.0',
      routeKey: `POST ${path.replace('/c1/', '/{clusterId}/')}`,
      rawPath: path,
      rawQueryString: '',
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
      requestContext: {
        accountId: '123456789012',
        apiId: 'abc123',
        domainName: 'abc123.execute-api.us-east-1.amazonaws.com',
        domainPrefix: 'abc123',
        http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.7', userAgent: 'volhook-forwarder' },
        requestId: 'req-gzip',
        routeKey: `POST ${path}`,
        stage: '$default',
        time: '30/Nov/2026:10:00:00 +0000',
        timeEpoch: Date.now(),
      },
      pathParameters: { clusterId: 'c1' },
      body: Buffer.from(bytes).toString('base64'),
      isBase64Encoded: true,
    } as unknown as LambdaEvent;
  }

  it('a gzip\'d body passed as text (not base64) -> 415 without Accept-Encoding, nothing done; control: the same bytes base64\'d -> 200', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volhook-gzip-lambda-text-'));
    const registryFile = join(dir, 'clusters.json');
    writeFileSync(registryFile, JSON.stringify({ clusters: { c1: { clusterId: 'c1', secrets: [SECRET_C1], region: 'us-east-1' } } }));
    vi.stubEnv('VOLHOOK_REGISTRY_FILE', registryFile);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    vi.stubEnv('AWS_REGION', 'us-east-1');
    vi.stubEnv('VOLHOOK_EC2_ROLE_ARN', 'arn:aws:iam::123456789012:role/volhook/volhook-ec2');
    const ec2Mock = mockClient(EC2Client);
    try {
      ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
      ec2Mock.on(CreateVolumeCommand).resolves(CREATING_VOLUME);
      const { handler } = (await import('../../functions/api.js')) as unknown as { handler: Handler };
      const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip', ...sign(fixtureBody, SECRET_C1) };
      const bytes = gzipSync(fixtureBody);
      // As API Gateway would pass a body it took for text: the bytes read as UTF-8.
      const asText = await handler({ ...event(PATH, headers, bytes), body: Buffer.from(bytes).toString('utf8'), isBase64Encoded: false } as unknown as LambdaEvent);
      expect(asText.statusCode).toBe(415);
      expect(JSON.parse(asText.body).error).toMatchObject({ code: 'unsupported_encoding', message: expect.stringContaining('as text') });
      expect(asText.headers?.['accept-encoding']).toBeUndefined();
      expect(ec2Mock.calls()).toEqual([]);
      const asBase64 = await handler(event(PATH, headers, bytes));
      expect(asBase64.statusCode).toBe(200);
      expect(ec2Mock.calls().length).toBeGreaterThan(0);
    } finally {
      ec2Mock.restore();
      vi.unstubAllEnvs();
    }
  });

  it('a base64 gzip\'d body -> the same results as the plain body, Accept-Encoding: gzip on the answer; a zip bomb -> 413 with no EC2 call', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volhook-gzip-lambda-'));
    const registryFile = join(dir, 'clusters.json');
    writeFileSync(registryFile, JSON.stringify({ clusters: { c1: { clusterId: 'c1', secrets: [SECRET_C1], region: 'us-east-1' } } }));
    vi.stubEnv('VOLHOOK_REGISTRY_FILE', registryFile);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    vi.stubEnv('AWS_REGION', 'us-east-1');
    vi.stubEnv('VOLHOOK_EC2_ROLE_ARN', 'arn:aws:iam::123456789012:role/volhook/volhook-ec2');
    const ec2Mock = mockClient(EC2Client);
    try {
      ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
      ec2Mock.on(CreateVolumeCommand).resolves(CREATING_VOLUME);
      const { handler } = (await import('../../functions/api.js')) as unknown as { handler: Handler };
      const post = (bytes: Uint8Array, headers: Record<string, string>) => handler(event(PATH, { 'content-type': 'application/json', ...headers }, bytes));

      const asIs = await post(Buffer.from(fixtureBody), sign(fixtureBody, SECRET_C1));
      expect(asIs.statusCode).toBe(200);
      const plainCalls = ec2Mock.calls().length;
      expect(plainCalls).toBeGreaterThan(0);
      const gzipped = await post(gzipSync(fixtureBody), { ...sign(fixtureBody, SECRET_C1), 'content-encoding': 'gzip' });
      expect(gzipped.statusCode).toBe(200);
      expect(JSON.parse(gzipped.body)).toEqual(JSON.parse(asIs.body));
      expect(gzipped.headers?.['accept-encoding']).toBe('gzip');
      expect(ec2Mock.calls()).toHaveLength(2 * plainCalls);

      const decoded = `{"clusterId":"c1","items":[],"padding":"${' '.repeat(16 * 1024 * 1024)}"}`;
      ec2Mock.resetHistory();
      const bomb = await post(gzipSync(decoded), { ...sign(decoded, SECRET_C1), 'content-encoding': 'gzip' });
      expect(bomb.statusCode).toBe(413);
      expect(JSON.parse(bomb.body).error.code).toBe('body_too_large');
      expect(bomb.headers?.['accept-encoding']).toBe('gzip');
      expect(ec2Mock.calls()).toEqual([]);
    } finally {
      ec2Mock.restore();
      vi.unstubAllEnvs();
    }
  });
});
