/** A backend app over a mocked EC2 client and an in-memory registry, for request-level tests. */
import { readFileSync } from 'node:fs';
import { EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { createApp, type AppDependencies } from '../../lib/app/index.js';
import { sign, type ForwarderVersions } from '../../lib/contract/index.js';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { createStaticRegistry } from '../../lib/registry/index.js';

export const SECRET_C1 = 'whsec_' + Buffer.from('cluster-one-secret-0123456789').toString('base64');
export const SECRET_C2 = 'whsec_' + Buffer.from('cluster-two-secret-0123456789').toString('base64');
export const NOW_MS = Date.UTC(2026, 10, 30, 10, 0, 0);

export const fixtureBody = readFileSync(new URL('../fixtures/reconcile-request.json', import.meta.url), 'utf8');

export function registration(clusterId: string, secret: string, extra: Record<string, unknown> = {}) {
  return { clusterId, secrets: [secret], region: 'us-east-1', ...extra };
}

/** The app at {@link NOW_MS} over the SDK's EC2Client, answered by whatever mock the test has put on it. */
function sdkApp(registrations: unknown[], overrides: Partial<AppDependencies> = {}) {
  const client = new EC2Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 's' }, maxAttempts: 1 });
  return createApp({
    registry: createStaticRegistry(registrations),
    gatewayFor: (reg, deadline) => createEc2Gateway({ client, clusterId: reg.clusterId, deadline }),
    now: () => NOW_MS,
    ...overrides,
  });
}

/** The app for clusters c1 and c2 (and `registrations`), with a fresh aws-sdk-client-mock on EC2. */
export function makeApp(overrides: Partial<AppDependencies> = {}, registrations: unknown[] = []) {
  const ec2Mock = mockClient(EC2Client);
  const app = sdkApp([registration('c1', SECRET_C1), registration('c2', SECRET_C2), ...registrations], overrides);
  return { app, ec2Mock };
}

/** The app for cluster c1 over EC2 as the test's FakeEc2 answers it. */
export function appOverFakeEc2() {
  return sdkApp([registration('c1', SECRET_C1)]);
}

/** The fixture claim's volume as EC2 describes it while it is being created. */
export const CREATING_VOLUME = {
  VolumeId: 'vol-0123456789abcdef0',
  AvailabilityZone: 'us-east-1a',
  Size: 20,
  State: 'creating',
  VolumeType: 'gp3',
  Encrypted: true,
} as const;

export function signedRequest(
  path: string,
  body: string,
  secret: string,
  options: { nowSeconds?: number; id?: string; headers?: Record<string, string>; versions?: ForwarderVersions } = {},
): RequestInit & { path: string } {
  const headers = sign(body, secret, {
    now: options.nowSeconds ?? Math.floor(NOW_MS / 1000),
    ...(options.id ? { id: options.id } : {}),
    ...(options.versions ? { versions: options.versions } : {}),
  });
  return {
    path,
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers, ...options.headers },
  };
}
