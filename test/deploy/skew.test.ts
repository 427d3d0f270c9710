/**
 * Version skew, where the contract allows it (lib/contract/version.ts: worksWith), on the local
 * stack: the previous release's forwarder — its own bundle, built from its tag (or recorded
 * commit) by its own bundle.ts, sending no version header — against today's backend; today's
 * forwarder against the previous release's backend (its own local stack, in a process of its
 * own); each through the whole life of a disk: claim -> Bound, pod -> VolumeAttachment
 * attached, pod gone -> detached, claim deleted -> disk and PV gone. And a forwarder claiming a
 * contract no backend serves: refused with the naming 426, not ready; its control, a forwarder
 * of this build on the same stack, is served and ready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContractSeen } from '../../lib/app/index.js';
import { CONTRACT_VERSIONS, HEADERLESS_CONTRACT, SUPPORTED_CONTRACTS, VOLHOOK_VERSION, worksWith } from '../../lib/contract/index.js';
import { silentLogger, startForwarder, type Forwarder, type ForwarderConfigInput } from '../../lib/forwarder/index.js';
import { kubeConfigFor } from '../../lib/kube/index.js';
import { attachmentsOf, kubeClients, orMissing, readVolume } from '../e2e/support/kube.js';
import { volumeById } from '../e2e/support/ec2.js';
import { provisionForPod, type ScenarioContext } from '../e2e/support/scenarios.js';
import { startScenarioStack, type E2eStack } from '../e2e/support/stack.js';
import { waitFor } from '../e2e/support/wait.js';
import { previousRelease, startOldStack, type OldStack, type PreviousRelease } from './previous-release.js';

let previous: PreviousRelease;
beforeAll(() => {
  previous = previousRelease();
}, 60_000);
afterAll(() => previous?.remove());

/** claim -> Bound; pod -> attached; pod deleted -> detached; claim deleted -> disk and PV deleted. */
async function provisionAttachReclaim(ctx: ScenarioContext, namespace: string): Promise<void> {
  const { pvName, volumeId } = await provisionForPod(ctx, namespace);
  await ctx.kube.core.deleteNamespacedPod({ namespace, name: 'user' });
  await waitFor(() => attachmentsOf(ctx.kube, pvName), (vas) => vas.length === 0, { what: `no VolumeAttachment for ${pvName}` });
  await waitFor(() => volumeById(ctx.ec2, volumeId), (v) => v?.State === 'available', { what: `${volumeId} detached` });
  await ctx.kube.core.deleteNamespacedPersistentVolumeClaim({ namespace, name: 'data' });
  await waitFor(() => volumeById(ctx.ec2, volumeId), (v) => v === undefined, { what: `EC2 volume ${volumeId} deleted` });
  await waitFor(() => orMissing(readVolume(ctx.kube, pvName)), (pv) => pv === undefined, { what: `PV ${pvName} deleted` });
}

/** A forwarder of this build (or claiming other versions) in this process, tuned as the e2e stack's. */
function forwarderConfig(urls: { backend: string; kube: string }, clusterId: string, secret: string): ForwarderConfigInput {
  return { apiUrl: urls.backend, clusterId, secret, kubeServer: urls.kube, port: 0, listenHost: '127.0.0.1', backoffInitialMs: 100, backoffMaxMs: 2_000, resyncSeconds: 2, informerRestartMs: 200 };
}

describe('the previous release', () => {
  it('is found (by its tag, else by its record) and is older than this build; its backend serves the contract its forwarder speaks', () => {
    expect(['tag', 'record']).toContain(previous.via);
    expect(previous.release.contract.serves).toContain(previous.release.contract.speaks);
    // Today's backend serves what the previous forwarder speaks: the point of serving the previous contract.
    expect(SUPPORTED_CONTRACTS).toContain(previous.release.contract.speaks);
  });
});

describe("the previous release's forwarder against today's backend", () => {
  let stack: E2eStack;
  let ctx: ScenarioContext;
  let child: ChildProcess | undefined;
  const output: string[] = [];
  const seen: ContractSeen[] = [];

  beforeAll(async () => {
    ({ stack, ctx } = await startScenarioStack({ forwarder: false, onContract: (_c, s) => void seen.push(s) }));
    child = spawn(process.execPath, [previous.bundle], {
      cwd: previous.dir,
      env: {
        PATH: process.env.PATH,
        VOLHOOK_API_URL: stack.urls.backend,
        VOLHOOK_CLUSTER_ID: stack.clusterId,
        VOLHOOK_SECRET: stack.secret,
        VOLHOOK_KUBE_SERVER: stack.urls.kube,
        VOLHOOK_PORT: '0',
        VOLHOOK_LISTEN_HOST: '127.0.0.1',
        VOLHOOK_RESYNC_SECONDS: '2',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  }, 60_000);

  afterAll(async () => {
    await stopChild(child);
    await stack?.stop();
  });

  it("provisions, attaches, detaches and reclaims; every request it sent spoke its own contract (0.1.0's: no version header) and was served", async () => {
    const speaks = previous.release.contract.speaks;
    expect(worksWith(speaks, SUPPORTED_CONTRACTS)).toBe(true);
    await provisionAttachReclaim(ctx, 'skew-old-forwarder').catch((err: Error) => {
      throw new Error(`${err.message}\n${previous.release.version} forwarder exit code ${child?.exitCode}, output:\n${output.join('').slice(-3000)}`);
    });
    expect(seen.length).toBeGreaterThan(0);
    // The previous forwarder's own contract; 0.1.0's sent no version header (contract 1, no version).
    expect(seen.every((s) => s.served && s.contract === speaks)).toBe(true);
    if (speaks === HEADERLESS_CONTRACT) expect(seen.every((s) => s.forwarderVersion === undefined)).toBe(true);
    expect(child?.exitCode).toBeNull();
  }, 120_000);

  it('a forwarder claiming contract 99 -> the naming 426: not ready, the refusal on /readyz, alive; control: a forwarder of this build on the same stack -> served and ready', async () => {
    await stopChild(child);
    const config = forwarderConfig(stack.urls, stack.clusterId, stack.secret);
    const deps = { kubeConfig: kubeConfigFor({ server: stack.urls.kube }), logger: silentLogger };
    const refused: Forwarder = await startForwarder(config, { ...deps, claimedVersions: { contract: 99, forwarderVersion: VOLHOOK_VERSION } });
    const control: Forwarder = await startForwarder(config, deps);
    try {
      await waitFor(() => refused.contractRefusal(), (r) => r !== undefined, { what: 'the refusal of contract 99' });
      const readyz = await fetch(`http://127.0.0.1:${refused.port}/readyz`);
      expect(readyz.status).toBe(503);
      expect(await readyz.text()).toContain(`speaks volhook contract 99; the backend (volhook ${VOLHOOK_VERSION}) serves contracts 1 and 2. Upgrade the backend`);
      expect((await fetch(`http://127.0.0.1:${refused.port}/healthz`)).status).toBe(200);
      expect(seen.some((s) => s.contract === 99 && !s.served)).toBe(true);

      await waitFor(async () => (await fetch(`http://127.0.0.1:${control.port}/readyz`)).status, (status) => status === 200, { what: 'the control forwarder ready' });
      await waitFor(() => seen.filter((s) => s.served && s.contract === CONTRACT_VERSIONS.current && s.forwarderVersion === VOLHOOK_VERSION), (s) => s.length > 0, { what: 'a contract-2 request served' });
      expect(control.contractRefusal()).toBeUndefined();
    } finally {
      await refused.stop();
      await control.stop();
    }
  }, 60_000);
});

describe("today's forwarder against the previous release's backend", () => {
  let old: OldStack;
  let ctx: ScenarioContext;
  let forwarder: Forwarder | undefined;
  let ec2: EC2Client;

  beforeAll(async () => {
    old = await startOldStack(previous);
    ec2 = new EC2Client({ region: old.region, endpoint: old.urls.ec2, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 10 });
    ctx = { kube: kubeClients(old.urls.kube), ec2, clusterId: old.clusterId, nodes: old.nodes as ScenarioContext['nodes'], results: [] };
    forwarder = await startForwarder(forwarderConfig(old.urls, old.clusterId, old.secret), { kubeConfig: kubeConfigFor({ server: old.urls.kube }), logger: silentLogger });
  }, 90_000);

  afterAll(async () => {
    await forwarder?.stop();
    ec2?.destroy();
    await old?.stop();
  });

  it(`contract ${CONTRACT_VERSIONS.current} with a backend serving the previous release's contracts: where worksWith allows it, provisions, attaches, detaches and reclaims; where not, is refused and says so`, async () => {
    // 0.1.0's backend serves contract 1 only and reads no version header: it reads contract 2
    // (contract 1's body, signed by v1 too) as contract 1, which worksWith allows. A pair it does
    // not allow is refused (426) by a backend that checks versions — that is what is asserted
    // then — and would be misread by one that does not: a backend rollback below such a release
    // needs the forwarders rolled back first (docs/upgrade.md).
    const { version, contract } = previous.release;
    if (!worksWith(CONTRACT_VERSIONS.current, contract.serves)) {
      await waitFor(() => forwarder?.contractRefusal(), (r) => r !== undefined, {
        what: `the ${version} backend's refusal of contract ${CONTRACT_VERSIONS.current}: the contract does not allow this pair (it serves ${contract.serves.join(', ')})`,
      });
      expect(forwarder?.readiness().ready).toBe(false);
      return;
    }
    await provisionAttachReclaim(ctx, 'skew-old-backend').catch((err: Error) => {
      throw new Error(`${err.message}\n${previous.release.version} stack output:\n${old.output().slice(-3000)}`);
    });
    expect(forwarder?.contractRefusal()).toBeUndefined();
    expect(forwarder?.readiness()).toEqual({ ready: true });
  }, 120_000);
});

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
