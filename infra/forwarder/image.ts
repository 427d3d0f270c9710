/**
 * How the forwarder image starts its program, read from infra/forwarder/Dockerfile, and what
 * the chart's Deployment gives it (NODE_OPTIONS, memory), rendered by helm, for what starts
 * the image's bundle outside a container (the image test, bench scenario c): the same command
 * line and options, so a flag of the image's is measured and tested where it runs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { forwarderContainer, renderChart } from '../tools/chart.js';

const DOCKERFILE = fileURLToPath(new URL('./Dockerfile', import.meta.url));

export interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions in order, continuation lines joined, comments dropped. */
export function instructions(text: string): Instruction[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [op, ...rest] = line.split(/\s+/);
      return { op: op!.toUpperCase(), args: rest.join(' ') };
    });
}

/** The image's command: the last stage's CMD, which must be in exec form (`["node", …, "forwarder.mjs"]`). */
export function imageCommand(dockerfile = readFileSync(DOCKERFILE, 'utf8')): string[] {
  const cmd = instructions(dockerfile).findLast((i) => i.op === 'CMD');
  if (!cmd) throw new Error('infra/forwarder/Dockerfile has no CMD');
  const command = execForm(cmd.args);
  if (!command || command.length < 2 || command[0] !== 'node') {
    throw new Error(`infra/forwarder/Dockerfile: CMD must be ["node", ...flags, script], not ${cmd.args}`);
  }
  return command;
}

/** A CMD's arguments in exec form (a JSON array of strings), or undefined (shell form). */
function execForm(args: string): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(args);
    return Array.isArray(parsed) && parsed.every((part) => typeof part === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The options the image gives node before its script (V8 flags NODE_OPTIONS does not accept). */
export function imageNodeFlags(dockerfile?: string): string[] {
  return imageCommand(dockerfile).slice(1, -1);
}

export interface DeploymentLimits {
  memoryLimit?: string;
  memoryRequest?: string;
  nodeOptions?: string;
}

/** The forwarder container's memory request/limit and NODE_OPTIONS in the chart's Deployment, with its default values. */
export function deploymentLimits(): DeploymentLimits {
  const container = forwarderContainer(renderChart());
  return {
    memoryLimit: container.resources?.limits?.memory,
    memoryRequest: container.resources?.requests?.memory,
    nodeOptions: container.env?.find((e) => e.name === 'NODE_OPTIONS')?.value,
  };
}

export interface ImageBuild {
  /** The image without its tag, e.g. ghcr.io/volhook/forwarder or a private mirror's. */
  repository: string;
  /** The tag: the one version of backend, forwarder and chart (package.json). */
  version: string;
  /** Seconds since the epoch of the commit built: every timestamp in the image, for the same digest from the same commit. */
  sourceDateEpoch: number;
  /** Push to the registry instead of loading into the local engine. */
  push: boolean;
  /** Where buildx writes the build's metadata (the digest among it). */
  metadataFile: string;
  /** Platforms, e.g. linux/amd64,linux/arm64 (needs push: a local engine loads one platform). */
  platforms?: string[];
}

/**
 * `docker buildx build` of the forwarder image, reproducible: the dependencies from the
 * lockfile (`npm ci` in the Dockerfile), the base image pinned by version, and every file's
 * and layer's time set to the commit's (SOURCE_DATE_EPOCH with rewrite-timestamp), so two
 * builds of one commit give one digest.
 */
export function imageBuildArgs(build: ImageBuild): string[] {
  if (build.platforms && build.platforms.length > 1 && !build.push) {
    throw new Error(`--platform ${build.platforms.join(',')}: a local engine loads one platform; add --push to build several`);
  }
  const output = build.push ? 'type=registry' : 'type=docker';
  return [
    'buildx', 'build',
    '-f', 'infra/forwarder/Dockerfile',
    '-t', `${build.repository}:${build.version}`,
    '--build-arg', `SOURCE_DATE_EPOCH=${build.sourceDateEpoch}`,
    '--output', `${output},rewrite-timestamp=true`,
    '--provenance=false',
    '--metadata-file', build.metadataFile,
    ...(build.platforms ? ['--platform', build.platforms.join(',')] : []),
    '.',
  ];
}
