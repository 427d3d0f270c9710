/**
 * How the forwarder image starts its program, read from infra/forwarder/Dockerfile, and what
 * the Deployment gives it (NODE_OPTIONS, memory), read from deployment.yaml, for what starts
 * the image's bundle outside a container (the image test, bench scenario c): the same command
 * line and options, so a flag of the image's is measured and tested where it runs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

const DOCKERFILE = fileURLToPath(new URL('./Dockerfile', import.meta.url));
const DEPLOYMENT = fileURLToPath(new URL('./deployment.yaml', import.meta.url));

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

/** The forwarder container's memory request/limit and NODE_OPTIONS from infra/forwarder/deployment.yaml. */
export function deploymentLimits(): DeploymentLimits {
  try {
    const doc = parseYaml(readFileSync(DEPLOYMENT, 'utf8')) as {
      spec?: { template?: { spec?: { containers?: Array<{ env?: Array<{ name: string; value?: string }>; resources?: { limits?: { memory?: string }; requests?: { memory?: string } } }> } } };
    };
    const container = doc.spec?.template?.spec?.containers?.[0];
    return {
      memoryLimit: container?.resources?.limits?.memory,
      memoryRequest: container?.resources?.requests?.memory,
      nodeOptions: container?.env?.find((e) => e.name === 'NODE_OPTIONS')?.value,
    };
  } catch {
    return {};
  }
}
