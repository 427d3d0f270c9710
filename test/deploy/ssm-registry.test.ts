/**
 * The SSM registry: one SecureString JSON per cluster, read through Powertools' SSMProvider
 * with a cache, behind the same ClusterRegistry interface the app uses.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../lib/app/index.js';
import type { Ec2Gateway } from '../../lib/ec2/index.js';
import { createSsmRegistry, RegistrationError, registryFromEnvironment } from '../../lib/registry/index.js';
import { NOW_MS, SECRET_C1, SECRET_C2, signedRequest } from '../app/harness.js';

const PATH = '/volhook/test/clusters/';
const ssm = mockClient(SSMClient);
const client = () => new SSMClient({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 's' } });

const registration = (secrets = [SECRET_C1]) => JSON.stringify({ clusterId: 'c1', secrets, region: 'us-east-1', allowedZones: ['us-east-1a'] });
const parameter = (value: string) => ({ Parameter: { Name: `${PATH}c1`, Type: 'SecureString' as const, Value: value, Version: 1 } });
const notFound = () => new ParameterNotFound({ message: '', $metadata: { httpStatusCode: 400 } });

/** EC2 must not be reached by any of these requests. */
const noEc2 = new Proxy({} as Ec2Gateway, {
  get: (_t, verb) => () => Promise.reject(new Error(`unexpected EC2 call ${String(verb)}`)),
});

beforeEach(() => {
  ssm.reset();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW_MS);
});
afterEach(() => vi.useRealTimers());

describe('SSM registry', () => {
  it('registered cluster -> read from <path><id>, decrypted, and parsed', async () => {
    ssm.on(GetParameterCommand, { Name: `${PATH}c1`, WithDecryption: true }).resolves(parameter(registration()));
    const reg = await createSsmRegistry({ path: PATH, client: client() }).get('c1');
    expect(reg).toMatchObject({ clusterId: 'c1', secrets: [SECRET_C1], region: 'us-east-1', allowedZones: ['us-east-1a'], writeBack: 'forwarder' });
  });

  it('second get within maxAge -> served from the cache, no second SSM call', async () => {
    ssm.on(GetParameterCommand).resolves(parameter(registration()));
    const registry = createSsmRegistry({ path: PATH, maxAgeSeconds: 60, client: client() });
    await registry.get('c1');
    vi.setSystemTime(NOW_MS + 59_000);
    await registry.get('c1');
    expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 1);
  });

  it('rotated secret -> seen once maxAge has passed', async () => {
    ssm.on(GetParameterCommand).resolvesOnce(parameter(registration())).resolves(parameter(registration([SECRET_C1, SECRET_C2])));
    const registry = createSsmRegistry({ path: PATH, maxAgeSeconds: 60, client: client() });
    expect((await registry.get('c1'))?.secrets).toEqual([SECRET_C1]);
    vi.setSystemTime(NOW_MS + 30_000);
    expect((await registry.get('c1'))?.secrets).toEqual([SECRET_C1]);
    vi.setSystemTime(NOW_MS + 61_000);
    expect((await registry.get('c1'))?.secrets).toEqual([SECRET_C1, SECRET_C2]);
    expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 2);
  });

  it('path without trailing slash -> the same parameter name', async () => {
    ssm.on(GetParameterCommand, { Name: `${PATH}c1` }).resolves(parameter(registration()));
    const reg = await createSsmRegistry({ path: PATH.slice(0, -1), client: client() }).get('c1');
    expect(reg).toMatchObject({ clusterId: 'c1', secrets: [SECRET_C1] });
    expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 1);
    expect(ssm.commandCalls(GetParameterCommand)[0]?.args[0].input.Name).toBe(`${PATH}c1`);
  });

  it('ParameterNotFound -> undefined, remembered briefly', async () => {
    ssm.on(GetParameterCommand).rejects(notFound());
    const registry = createSsmRegistry({ path: PATH, notFoundMaxAgeSeconds: 10, client: client() });
    expect(await registry.get('c1')).toBeUndefined();
    expect(await registry.get('c1')).toBeUndefined();
    expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 1);
    vi.setSystemTime(NOW_MS + 11_000);
    expect(await registry.get('c1')).toBeUndefined();
    expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 2);
  });

  it('value that is not JSON -> RegistrationError naming the parameter', async () => {
    ssm.on(GetParameterCommand).resolves(parameter('{"clusterId": "c1", secrets'));
    await expect(createSsmRegistry({ path: PATH, client: client() }).get('c1')).rejects.toThrow(
      new RegistrationError(`registration of cluster "c1" in SSM parameter ${PATH}c1 is not valid JSON`),
    );
  });

  it('JSON that breaks the schema -> RegistrationError naming the field', async () => {
    ssm.on(GetParameterCommand).resolves(parameter(JSON.stringify({ clusterId: 'c1', secrets: [], region: 'us-east-1' })));
    const err = await createSsmRegistry({ path: PATH, client: client() }).get('c1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistrationError);
    expect((err as Error).message).toMatch(/secrets/);
  });

  it('registration stored under another id -> RegistrationError', async () => {
    ssm.on(GetParameterCommand).resolves(parameter(JSON.stringify({ clusterId: 'c2', secrets: [SECRET_C2], region: 'us-east-1' })));
    await expect(createSsmRegistry({ path: PATH, client: client() }).get('c1')).rejects.toBeInstanceOf(RegistrationError);
  });

  it('SSM refuses (AccessDenied) -> the error propagates, it is not "unregistered"', async () => {
    ssm.on(GetParameterCommand).rejects(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }));
    const err = await createSsmRegistry({ path: PATH, client: client() }).get('c1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(RegistrationError);
  });
});

describe('registryFromEnvironment', () => {
  it('VOLHOOK_REGISTRY_SSM_PATH -> reads SSM under that path', async () => {
    ssm.on(GetParameterCommand, { Name: '/volhook/prod/clusters/c1' }).resolves(parameter(registration()));
    const registry = registryFromEnvironment({ VOLHOOK_REGISTRY_SSM_PATH: '/volhook/prod/clusters/', AWS_REGION: 'us-east-1' });
    expect((await registry.get('c1'))?.clusterId).toBe('c1');
  });

  it('both a file and an SSM path (npm run offline) -> the file wins, SSM is not called', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'volhook-env-')), 'clusters.json');
    writeFileSync(file, JSON.stringify({ clusters: { c1: JSON.parse(registration()) } }));
    const registry = registryFromEnvironment({ VOLHOOK_REGISTRY_FILE: file, VOLHOOK_REGISTRY_SSM_PATH: PATH });
    expect((await registry.get('c1'))?.clusterId).toBe('c1');
    expect(ssm).not.toHaveReceivedCommand(GetParameterCommand);
  });

  it('neither file nor SSM path -> refuses to start, naming both', () => {
    expect(() => registryFromEnvironment({})).toThrow(/VOLHOOK_REGISTRY_FILE or VOLHOOK_REGISTRY_SSM_PATH/);
  });

  it('bad VOLHOOK_REGISTRY_MAX_AGE_SECONDS -> refuses to start, naming it', () => {
    expect(() => registryFromEnvironment({ VOLHOOK_REGISTRY_SSM_PATH: PATH, VOLHOOK_REGISTRY_MAX_AGE_SECONDS: 'soon' })).toThrow(/VOLHOOK_REGISTRY_MAX_AGE_SECONDS/);
  });
});

describe('the app over the SSM registry', () => {
  const app = () => createApp({ registry: createSsmRegistry({ path: PATH, client: client() }), gatewayFor: () => noEc2, now: () => NOW_MS });
  const body = JSON.stringify({ clusterId: 'c1', items: [{ kind: 'PersistentVolumeClaimDeleted', uid: '0b7c9d52-7a3e-4f0e-9c61-3e2f8a4d5b16', namespace: 'default', name: 'data', pvExists: true }] });
  async function post(clusterId: string) {
    const { path, ...init } = signedRequest(`/v1/clusters/${clusterId}/reconcile`, body, SECRET_C1);
    const res = await app().request(path, init);
    return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } };
  }

  it('registered cluster, signed request -> 200', async () => {
    ssm.on(GetParameterCommand).resolves(parameter(registration()));
    expect((await post('c1')).status).toBe(200);
  });

  it('missing parameter -> 404 unknown_cluster, not 500', async () => {
    ssm.on(GetParameterCommand).rejects(notFound());
    const res = await post('c1');
    expect(res.status).toBe(404);
    expect(res.body.error?.code).toBe('unknown_cluster');
  });

  it('malformed parameter -> 403 registration_invalid, not 500', async () => {
    ssm.on(GetParameterCommand).resolves(parameter('not json'));
    const res = await post('c1');
    expect(res.status).toBe(403);
    expect(res.body.error?.code).toBe('registration_invalid');
  });

  it('schema-invalid parameter -> 403 naming the field, not 500', async () => {
    ssm.on(GetParameterCommand).resolves(parameter(JSON.stringify({ clusterId: 'c1', secrets: [SECRET_C1], region: 'us-east-1', maxSizeGiB: -1 })));
    const res = await post('c1');
    expect(res.status).toBe(403);
    expect(res.body.error?.message).toMatch(/maxSizeGiB/);
  });
});
