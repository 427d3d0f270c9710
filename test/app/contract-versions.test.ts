/**
 * The backend serves the current and the previous contract (lib/contract/version.ts) and
 * refuses any other with a 426 naming both sides' contracts and versions, before it looks
 * anything up, verifies, records or calls: each refusal has its control, the same request of a
 * contract served, which goes all the way to EC2.
 */
import { CreateVolumeCommand, DescribeVolumesCommand } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import type { ContractSeen } from '../../lib/app/index.js';
import { ContractRefusalSchema, VersionHeaders, VOLHOOK_VERSION, type ForwarderVersions } from '../../lib/contract/index.js';
import { createMemoryReplayStore } from '../../lib/replay/index.js';
import { createStaticRegistry, type ClusterRegistry } from '../../lib/registry/index.js';
import { CREATING_VOLUME, fixtureBody, makeApp, registration, SECRET_C1, signedRequest } from './harness.js';

const PATH = '/v1/clusters/c1/reconcile';
const CURRENT: ForwarderVersions = { contract: 2, forwarderVersion: '0.2.0' };

function harness() {
  const seen: Array<{ clusterId: string } & ContractSeen> = [];
  let registryReads = 0;
  const registrations = createStaticRegistry([registration('c1', SECRET_C1)]);
  const registry: ClusterRegistry = {
    get: (clusterId) => {
      registryReads += 1;
      return registrations.get(clusterId);
    },
  };
  const replay = createMemoryReplayStore();
  const { app, ec2Mock } = makeApp({ registry, replay, onContract: (clusterId, s) => void seen.push({ clusterId, ...s }) });
  ec2Mock.on(DescribeVolumesCommand).resolves({ Volumes: [] });
  ec2Mock.on(CreateVolumeCommand).resolves(CREATING_VOLUME);
  const send = async (req: ReturnType<typeof signedRequest>) => {
    const { path, ...init } = req;
    const res = await app.request(path, init);
    return { status: res.status, headers: res.headers, body: (await res.json()) as unknown };
  };
  return { send, ec2Mock, seen, registryReads: () => registryReads };
}

let h = harness();
afterEach(() => {
  h.ec2Mock.restore();
  h = harness();
});

describe('contracts served', () => {
  it('no version headers, v1 only (a 0.1.0 forwarder) -> contract 1: 200, EC2 called, seen as contract 1 with no forwarder version', async () => {
    const res = await h.send(signedRequest(PATH, fixtureBody, SECRET_C1));
    expect(res.status).toBe(200);
    expect(h.ec2Mock).toHaveReceivedCommand(CreateVolumeCommand);
    expect(h.seen).toEqual([{ clusterId: 'c1', contract: 1, served: true }]);
  });

  it('contract 2 and the forwarder version, v1h-signed -> 200, EC2 called, seen with both', async () => {
    const res = await h.send(signedRequest(PATH, fixtureBody, SECRET_C1, { versions: CURRENT }));
    expect(res.status).toBe(200);
    expect(h.ec2Mock).toHaveReceivedCommand(CreateVolumeCommand);
    expect(h.seen).toEqual([{ clusterId: 'c1', contract: 2, forwarderVersion: '0.2.0', served: true }]);
  });
});

describe('contracts refused: 426 before any work', () => {
  it('contract 99 -> 426 naming 99, the contracts served, both versions and the backend to upgrade; Upgrade lists the contracts; no registry read, no EC2 call, no webhook id recorded', async () => {
    const res = await h.send(signedRequest(PATH, fixtureBody, SECRET_C1, { id: 'msg_once', versions: { contract: 99, forwarderVersion: '9.0.0' } }));
    expect(res.status).toBe(426);
    expect(res.headers.get('upgrade')).toBe('volhook-contract/1, volhook-contract/2');
    const refusal = ContractRefusalSchema.parse(res.body);
    expect(refusal.contract).toEqual({ offered: 99, served: [1, 2], upgrade: 'backend', backendVersion: VOLHOOK_VERSION, forwarderVersion: '9.0.0' });
    expect(refusal.error.message).toMatch(/^forwarder 9\.0\.0 speaks volhook contract 99; the backend \(volhook .+\) serves contracts 1 and 2\. Upgrade the backend/);
    expect(h.registryReads()).toBe(0);
    expect(h.ec2Mock.calls()).toHaveLength(0);
    expect(h.seen).toEqual([{ clusterId: 'c1', contract: 99, forwarderVersion: '9.0.0', served: false }]);

    // The control, through the same path: the same webhook id (so none was recorded), contract 2.
    const control = await h.send(signedRequest(PATH, fixtureBody, SECRET_C1, { id: 'msg_once', versions: CURRENT }));
    expect(control.status).toBe(200);
    expect(h.registryReads()).toBe(1);
    expect(h.ec2Mock).toHaveReceivedCommand(CreateVolumeCommand);
  });

  it('contract 0 -> 426 naming the forwarder as what to upgrade; no EC2 call', async () => {
    const res = await h.send(signedRequest(PATH, fixtureBody, SECRET_C1, { versions: { contract: 0, forwarderVersion: '0.0.1' } }));
    expect(res.status).toBe(426);
    const refusal = ContractRefusalSchema.parse(res.body);
    expect(refusal.contract).toMatchObject({ offered: 0, served: [1, 2], upgrade: 'forwarder' });
    expect(refusal.error.message).toMatch(/Upgrade the forwarder to a release that speaks 1 or 2/);
    expect(h.ec2Mock.calls()).toHaveLength(0);
  });

  it('a contract header without the forwarder version, or not a number -> 400 naming the header; no EC2 call', async () => {
    const malformed: Record<string, string>[] = [{ [VersionHeaders.contract]: '2' }, { [VersionHeaders.contract]: 'two', [VersionHeaders.forwarder]: '0.2.0' }];
    for (const headers of malformed) {
      const res = await h.send(signedRequest(PATH, fixtureBody, SECRET_C1, { headers }));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: { code: 'bad_version_headers', message: expect.stringContaining(VersionHeaders.contract) } });
    }
    expect(h.registryReads()).toBe(0);
    expect(h.ec2Mock.calls()).toHaveLength(0);
  });
});

describe('the version headers are signed (v1h)', () => {
  it('the forwarder version changed after signing -> 401; no EC2 call', async () => {
    const req = signedRequest(PATH, fixtureBody, SECRET_C1, { versions: CURRENT });
    const res = await h.send({ ...req, headers: { ...(req.headers as Record<string, string>), [VersionHeaders.forwarder]: '0.3.0' } });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: 'bad_signature', message: expect.stringContaining('v1h signature does not match') } });
    expect(h.ec2Mock.calls()).toHaveLength(0);
  });

  it('version headers added to a request signed by v1 alone -> 401: v1 does not cover them', async () => {
    const res = await h.send(signedRequest(PATH, fixtureBody, SECRET_C1, { headers: { [VersionHeaders.contract]: '2', [VersionHeaders.forwarder]: '0.2.0' } }));
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: 'bad_signature', message: expect.stringContaining('a v1 signature does not cover them') } });
    expect(h.ec2Mock.calls()).toHaveLength(0);
  });

  it('a contract-2 request with its version headers and v1h removed -> the contract-1 request of the same body it also is: 200 (a contract whose body differs is sent without v1: signing.ts)', async () => {
    const req = signedRequest(PATH, fixtureBody, SECRET_C1, { versions: CURRENT });
    const headers = { ...(req.headers as Record<string, string>) };
    delete headers[VersionHeaders.contract];
    delete headers[VersionHeaders.forwarder];
    headers['webhook-signature'] = headers['webhook-signature']!.split(' ').filter((s) => s.startsWith('v1,')).join(' ');
    const res = await h.send({ ...req, headers });
    expect(res.status).toBe(200);
    expect(h.seen).toEqual([{ clusterId: 'c1', contract: 1, served: true }]);
  });
});
