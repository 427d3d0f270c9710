/**
 * The forwarder image, without a Docker engine: what the Dockerfile says (pinned Node of the
 * toolchain, the bundle built by infra/forwarder/bundle.ts, a non-root user, `node
 * --optimize-for-size forwarder.mjs`), then the very bundle that step builds, started with the
 * image's command line (infra/forwarder/image.ts) as the image starts it — alone
 * in an empty working directory, no node_modules, plain `node` — against the local stack, where
 * it provisions a claim.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildForwarderBundle, FORWARDER_NODE_MAJOR } from '../../infra/forwarder/bundle.js';
import type { ContractSeen } from '../../lib/app/index.js';
import { CONTRACT_VERSIONS } from '../../lib/contract/index.js';
import { deploymentLimits, imageCommand, imageNodeFlags, instructions, type Instruction } from '../../infra/forwarder/image.js';
import { createClaim, createNamespace } from '../e2e/support/kube.js';
import { waitClaimBound } from '../e2e/support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from '../e2e/support/stack.js';
import type { ScenarioContext } from '../e2e/support/scenarios.js';

const file = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

const dockerfile = instructions(file('infra/forwarder/Dockerfile'));
const stages = dockerfile.reduce<Instruction[][]>((all, i) => (i.op === 'FROM' ? [...all, [i]] : (all.at(-1)!.push(i), all)), []);
const packageVersion = (JSON.parse(file('package.json')) as { version: string }).version;
const lockedNode = (JSON.parse(file('package-lock.json')) as { packages: Record<string, { version?: string }> }).packages['node_modules/node']?.version;
const lambdaRuntime = (parse(file('serverless.yml')) as { provider: { runtime: string } }).provider.runtime;

describe('infra/forwarder/Dockerfile', () => {
  it('every stage starts from the Node the lockfile pins for the toolchain, the major of the bundle target and of the Lambda runtime', () => {
    expect(lockedNode).toMatch(/^\d+\.\d+\.\d+$/);
    const froms = stages.map((s) => s[0]!.args.split(/\s+/)[0]);
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const from of froms) expect(from).toBe(`node:${lockedNode}-alpine`);
    expect(Number(lockedNode!.split('.')[0])).toBe(FORWARDER_NODE_MAJOR);
    expect(lambdaRuntime).toBe(`nodejs${FORWARDER_NODE_MAJOR}.x`);
  });

  it('the build stage installs from the lockfile and builds dist/forwarder.mjs with infra/forwarder/bundle.ts', () => {
    const build = stages[0]!;
    expect(build[0]!.args).toMatch(/ AS build$/);
    const runs = build.filter((i) => i.op === 'RUN').map((i) => i.args);
    expect(runs[0]).toMatch(/^npm ci\b/);
    expect(runs).toContain('node infra/forwarder/bundle.ts dist/forwarder.mjs');
    const copied = build.filter((i) => i.op === 'COPY').flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    // bundle.ts reads bin/forwarder.ts and everything it imports from lib/.
    for (const needed of ['package.json', 'package-lock.json', 'lib', 'bin', 'infra/forwarder/bundle.ts']) expect(copied).toContain(needed);
  });

  it('the image: only the bundle, run as `node --optimize-for-size forwarder.mjs` by a non-root user', () => {
    const image = stages.at(-1)!;
    expect(image.filter((i) => i.op === 'WORKDIR').map((i) => i.args)).toEqual(['/app']);
    expect(image.filter((i) => i.op === 'COPY').map((i) => i.args)).toEqual(['--from=build --chown=0:0 /src/dist/forwarder.mjs ./forwarder.mjs']);
    const users = image.filter((i) => i.op === 'USER').map((i) => i.args);
    expect(users).toHaveLength(1);
    const [uid, gid] = users[0]!.split(':').map(Number);
    expect(uid).toBeGreaterThan(0);
    expect(gid).toBeGreaterThan(0);
    // The Deployment runs as that same user (runAsNonRoot needs a numeric one).
    expect(file('infra/forwarder/deployment.yaml')).toContain(`runAsUser: ${uid}`);
    // The user comes before the command, and nothing after it switches back.
    expect(image.findIndex((i) => i.op === 'USER')).toBeLessThan(image.findIndex((i) => i.op === 'CMD'));
    expect(image.filter((i) => i.op === 'CMD').map((i) => JSON.parse(i.args))).toEqual([['node', '--optimize-for-size', 'forwarder.mjs']]);
    expect(imageCommand()).toEqual(['node', '--optimize-for-size', 'forwarder.mjs']);
    expect(image.some((i) => i.op === 'ENTRYPOINT')).toBe(false);
  });
});

describe('infra/forwarder/image.ts: the command line read from a Dockerfile', () => {
  it('the last CMD in exec form -> node, its flags, the script; shell form, another program or no CMD -> an error naming it', () => {
    const base = 'FROM node:24-alpine AS build\nCMD ["node", "build.mjs"]\nFROM node:24-alpine\n';
    expect(imageCommand(`${base}CMD ["node", "--optimize-for-size", "--stack-size=900", "forwarder.mjs"]`)).toEqual(['node', '--optimize-for-size', '--stack-size=900', 'forwarder.mjs']);
    expect(imageNodeFlags(`${base}CMD ["node", "forwarder.mjs"]`)).toEqual([]);
    expect(() => imageCommand(`${base}CMD node forwarder.mjs`)).toThrow('CMD must be ["node", ...flags, script], not node forwarder.mjs');
    expect(() => imageCommand(`${base}CMD ["bun", "forwarder.mjs"]`)).toThrow('CMD must be ["node", ...flags, script], not ["bun", "forwarder.mjs"]');
    expect(() => imageCommand('FROM node:24-alpine\nUSER 1:1\n')).toThrow('infra/forwarder/Dockerfile has no CMD');
  });
});

describe('the image bundle, started as the image starts it, against the local stack', () => {
  let app: string;
  let stack: E2eStack;
  let ctx: ScenarioContext;
  let child: ChildProcess | undefined;
  const output: string[] = [];
  const seen: ContractSeen[] = [];

  beforeAll(async () => {
    app = mkdtempSync(join(tmpdir(), 'volhook-image-'));
    await buildForwarderBundle(join(app, 'forwarder.mjs'));
    ({ stack, ctx } = await startScenarioStack({ forwarder: false, immediateClass: true, onContract: (_c, s) => void seen.push(s) }));
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await stack?.stop();
    rmSync(app, { recursive: true, force: true });
  });

  it("one file, nothing beside it; the image's command provisions a claim (Bound, PV of the driver)", async () => {
    expect(readdirSync(app)).toEqual(['forwarder.mjs']);
    expect(Number(process.versions.node.split('.')[0])).toBe(FORWARDER_NODE_MAJOR);
    const deployment = file('infra/forwarder/deployment.yaml');
    const { nodeOptions } = deploymentLimits();
    expect(nodeOptions).toMatch(/--max-old-space-size=\d+/);
    expect(deployment).toMatch(/name: VOLHOOK_LEADER_ELECT\s+value: "true"/);
    await createNamespace(stack.kube, 'volhook');

    // The image's own command line (its V8 flags among it: a flag this Node did not know would stop it here).
    const [, ...args] = imageCommand();
    expect(args.at(-1)).toBe('forwarder.mjs');
    child = spawn(process.execPath, args, {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
        VOLHOOK_API_URL: stack.urls.backend,
        VOLHOOK_CLUSTER_ID: stack.clusterId,
        VOLHOOK_SECRET: stack.secret,
        VOLHOOK_KUBE_SERVER: stack.urls.kube,
        VOLHOOK_PORT: '0',
        VOLHOOK_LISTEN_HOST: '127.0.0.1',
        VOLHOOK_RESYNC_SECONDS: '2',
        // As the Deployment runs it: leader election on a Lease in the pod's namespace.
        VOLHOOK_LEADER_ELECT: 'true',
        VOLHOOK_LEASE_NAMESPACE: 'volhook',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));

    await createNamespace(stack.kube, 'image');
    await createClaim(stack.kube, 'image', 'data', { storageClassName: IMMEDIATE_CLASS });
    const pvc = await waitClaimBound(ctx, 'image', 'data', 90_000).catch((err: Error) => {
      throw new Error(`${err.message}\nforwarder exit code ${child?.exitCode}, output:\n${output.join('').slice(-3000)}`);
    });
    const pv = await stack.kube.core.readPersistentVolume({ name: pvc.spec!.volumeName! });
    expect(pv.spec?.csi?.driver).toBe('ebs.csi.aws.com');
    expect(pv.spec?.csi?.volumeHandle).toMatch(/^vol-/);
    expect(child.exitCode).toBeNull();
    expect(output.join('')).toContain('forwarder started');
    // The bundle carries package.json's version and speaks the current contract: in its log and in every request.
    const started = output.join('').split('\n').filter((line) => line.includes('"forwarder started"')).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(started).toEqual([expect.objectContaining({ version: packageVersion, contract: CONTRACT_VERSIONS.current })]);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.served && s.contract === CONTRACT_VERSIONS.current && s.forwarderVersion === packageVersion)).toBe(true);
  }, 120_000);
});
