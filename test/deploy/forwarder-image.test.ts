/**
 * The forwarder image, without a Docker engine: what the Dockerfile says (pinned Node of the
 * toolchain, the bundle built by infra/forwarder/bundle.ts, a non-root user, `node
 * --optimize-for-size forwarder.mjs`), then the very bundle that step builds, started with the
 * image's command line (infra/forwarder/image.ts) and the environment the chart's Deployment
 * gives it (rendered by helm) — alone in an empty working directory, no node_modules, plain
 * `node` — against the local stack, where it provisions, attaches and reclaims.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildForwarderBundle, FORWARDER_NODE_MAJOR } from '../../infra/forwarder/bundle.js';
import { deploymentLimits, imageBuildArgs, imageCommand, imageNodeFlags, instructions, type Instruction } from '../../infra/forwarder/image.js';
import { containerEnv, only, renderChart } from '../../infra/tools/chart.js';
import type { ContractSeen } from '../../lib/app/index.js';
import { CONTRACT_VERSIONS } from '../../lib/contract/index.js';
import { freePort } from '../e2e/support/process.js';
import { createClaim, createNamespace } from '../e2e/support/kube.js';
import { provisionForPod, reclaimPolicies, waitClaimBound } from '../e2e/support/scenarios.js';
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
    // The chart's Deployment runs as that same user (runAsNonRoot needs a numeric one).
    const pod = (only(renderChart(), 'Deployment') as unknown as { spec: { template: { spec: { securityContext: { runAsUser: number; runAsGroup: number } } } } }).spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsUser: uid, runAsGroup: gid });
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

describe('npm run image:build', () => {
  const build = { repository: 'registry.example.internal/volhook-forwarder', version: '1.2.3', sourceDateEpoch: 1_767_225_600, push: false, metadataFile: '/tmp/m.json' };

  it("docker buildx of infra/forwarder/Dockerfile, tagged with the version, every timestamp the commit's, the digest written out", () => {
    const args = imageBuildArgs(build);
    expect(args.slice(0, 2)).toEqual(['buildx', 'build']);
    expect(args).toEqual(expect.arrayContaining(['-f', 'infra/forwarder/Dockerfile', '-t', 'registry.example.internal/volhook-forwarder:1.2.3', '--build-arg', 'SOURCE_DATE_EPOCH=1767225600', '--output', 'type=docker,rewrite-timestamp=true', '--metadata-file', '/tmp/m.json']));
    expect(args.at(-1)).toBe('.');
    expect(imageBuildArgs({ ...build, push: true })).toContain('type=registry,rewrite-timestamp=true');
  });

  it("docs/deploy.md's image:build lines (the image of a tested commit, and of a release for a private registry) run as written: a dry run builds <repository>:<package version> and pushes it; the mirror line copies the chart's default repository", async () => {
    const section = file('docs/deploy.md').split('\n### The image\n')[1]!.split('\n## ')[0]!;
    const lines = [...section.matchAll(/^npm run image:build -- ((?:.*\\\n)*.*)$/gm)].map((m) => m[1]!.replace(/\\\n\s*/g, ' ').trim());
    expect(lines).toHaveLength(2);
    const root = fileURLToPath(new URL('../..', import.meta.url));
    for (const args of lines) {
      const repository = /--repository (\S+)/.exec(args)?.[1];
      expect(repository, args).toBe('registry.example.internal/volhook/forwarder');
      const { stderr } = await promisify(execFile)('npx', ['tsx', 'bin/image-build.ts', ...args.split(/\s+/), '--dry-run'], { cwd: root, timeout: 60_000 });
      expect(stderr, args).toContain(` -t ${repository}:${packageVersion} `);
      expect(stderr, args).toContain(' --output type=registry,rewrite-timestamp=true ');
    }
    // A published image mirrored: the chart's default repository, at the version's tag (the chart's default tag, test/deploy/chart.test.ts).
    const chartValues = parse(file('charts/volhook-forwarder/values.yaml')) as { image: { repository: string; tag: string } };
    expect(chartValues.image.tag).toBe('');
    expect(section).toContain(`\`crane copy ${chartValues.image.repository}:<version> <mirror>/volhook/forwarder:<version>\``);
    expect(section).toContain("the chart's default\ntag is the chart's own `appVersion`");
  }, 150_000);

  it('several platforms -> only when pushed (a local engine loads one)', () => {
    expect(() => imageBuildArgs({ ...build, platforms: ['linux/amd64', 'linux/arm64'] })).toThrow(/add --push/);
    expect(imageBuildArgs({ ...build, push: true, platforms: ['linux/amd64', 'linux/arm64'] })).toEqual(expect.arrayContaining(['--platform', 'linux/amd64,linux/arm64']));
    expect(imageBuildArgs({ ...build, platforms: ['linux/arm64'] })).toEqual(expect.arrayContaining(['--platform', 'linux/arm64']));
  });
});

describe('the image bundle, started as the image starts it with the chart\'s environment, against the local stack', () => {
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

  it("one file, nothing beside it; the image's command with the chart's environment provisions, attaches and reclaims", async () => {
    expect(readdirSync(app)).toEqual(['forwarder.mjs']);
    expect(Number(process.versions.node.split('.')[0])).toBe(FORWARDER_NODE_MAJOR);

    // The chart rendered for this stack, as `helm install` would give it to the cluster.
    const manifests = renderChart({
      namespace: 'volhook',
      valuesFiles: [],
      values: { backendUrl: stack.urls.backend, clusterId: stack.clusterId, secret: { value: stack.secret }, resyncSeconds: 2, port: await freePort() },
    });
    const env = containerEnv(manifests);
    expect(env).toMatchObject({ VOLHOOK_LEADER_ELECT: 'true', VOLHOOK_LEASE_NAMESPACE: 'volhook', VOLHOOK_API_URL: stack.urls.backend });
    expect(env.NODE_OPTIONS).toBe(deploymentLimits().nodeOptions);
    expect(env.NODE_OPTIONS).toMatch(/--max-old-space-size=\d+/);
    // The Secret the pod mounts, as kubelet would project it: one file per key.
    const secret = only(manifests, 'Secret') as unknown as { stringData: Record<string, string> };
    const secretDir = join(app, 'secret');
    const secretFile = join(secretDir, env.VOLHOOK_SECRET_FILE!.split('/').at(-1)!);
    mkdirSync(secretDir);
    writeFileSync(secretFile, secret.stringData[env.VOLHOOK_SECRET_FILE!.split('/').at(-1)!]!);
    await createNamespace(stack.kube, 'volhook');

    // The image's own command line (its V8 flags among it: a flag this Node did not know would stop it here).
    const [, ...args] = imageCommand();
    expect(args.at(-1)).toBe('forwarder.mjs');
    child = spawn(process.execPath, args, {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        ...env,
        // What differs outside a pod: the secret's file, the API server (no in-cluster
        // config) and the health server's address.
        VOLHOOK_SECRET_FILE: secretFile,
        VOLHOOK_KUBE_SERVER: stack.urls.kube,
        VOLHOOK_LISTEN_HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    const explain = (err: Error) => {
      throw new Error(`${err.message}\nforwarder exit code ${child?.exitCode}, output:\n${output.join('').slice(-3000)}`);
    };

    await createNamespace(stack.kube, 'image');
    await createClaim(stack.kube, 'image', 'data', { storageClassName: IMMEDIATE_CLASS });
    const pvc = await waitClaimBound(ctx, 'image', 'data', 90_000).catch(explain);
    const pv = await stack.kube.core.readPersistentVolume({ name: pvc.spec!.volumeName! });
    expect(pv.spec?.csi?.driver).toBe('ebs.csi.aws.com');
    expect(pv.spec?.csi?.volumeHandle).toMatch(/^vol-/);
    // Attached for a pod; detached and deleted (Delete) or kept (Retain) when the pod and claim go.
    await provisionForPod(ctx, 'image-pod').catch(explain);
    await reclaimPolicies(ctx, 'image-reclaim').catch(explain);
    expect(child.exitCode).toBeNull();
    expect(output.join('')).toContain('forwarder started');
    // The bundle carries package.json's version and speaks the current contract: in its log and in every request.
    const started = output.join('').split('\n').filter((line) => line.includes('"forwarder started"')).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(started).toEqual([expect.objectContaining({ version: packageVersion, contract: CONTRACT_VERSIONS.current })]);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.served && s.contract === CONTRACT_VERSIONS.current && s.forwarderVersion === packageVersion)).toBe(true);
  }, 240_000);
});
