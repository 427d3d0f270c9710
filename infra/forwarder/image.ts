/**
 * How the forwarder image starts its program, read from infra/forwarder/Dockerfile, for what
 * starts the image's bundle outside a container (the image test, bench scenario c): the same
 * command line, so a flag of the image's is measured and tested where it runs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
