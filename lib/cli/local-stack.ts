/**
 * The one way every cluster command finds a running local stack (`npm start`): with neither
 * --file nor --ssm-path, the stack that `.volhook/local/stack.json` (or VOLHOOK_LOCAL_DIR)
 * names is used when it runs the cluster the command is about. Its registry file, reports,
 * EC2 simulator and Kubernetes API then stand in for the defaults, so `show local`,
 * `adopt local` and `audit local` all see the same stack.
 */
import { readFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigFor } from '../kube/index.js';
import { localDirFrom, readDescriptor, type LocalStackDescriptor } from '../local/stack/local-files.js';
import type { RegistryTarget } from './args.js';

export type { LocalStackDescriptor } from '../local/stack/local-files.js';

/** The simulator takes any keys; these keep the operator's own credentials out of it. */
export const LOCAL_CREDENTIALS: LocalCredentials = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface LocalCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** What a command names: its cluster, and whether a registry was given. */
export interface LocalLookup {
  clusterId: string;
  targetGiven: boolean;
}

/** The stack the command uses: the running one, when no registry was given and it runs this cluster. */
export function localStackFor(command: LocalLookup, running: LocalStackDescriptor | undefined): LocalStackDescriptor | undefined {
  return !command.targetGiven && running?.clusterId === command.clusterId ? running : undefined;
}

/** The registry a command reads: the local stack's file when it applies, else the one given (or the default). */
export function registryTargetFor(target: RegistryTarget, local: LocalStackDescriptor | undefined): RegistryTarget {
  return local ? { kind: 'file', path: local.registryFile } : target;
}

/**
 * The local stack's Kubernetes API as a kubeconfig: the one the stack wrote (the real control
 * plane needs its token and CA), else its URL (the simulated API: plain http, no credentials).
 */
export function localKubeConfig(local: LocalStackDescriptor): KubeConfig {
  if (!local.kubeconfig) return kubeConfigFor({ server: local.kubeUrl });
  const kc = new KubeConfig();
  kc.loadFromFile(local.kubeconfig);
  return kc;
}

/**
 * Commands that read no cluster's Kubernetes API, for which a running stack serves more than its
 * own cluster: `add` registers a new one in the file the stack's backend reads (not in a file it
 * never reads), and the others find a cluster registered there with the stack's registry,
 * reports and EC2 simulator (`audit second` needs no --reports-dir).
 */
const REGISTRY_COMMANDS: ReadonlySet<string> = new Set(['add', 'show', 'set', 'rotate-secret', 'remove-old-secrets', 'remove', 'audit']);

/** Reads the local directory (from `env` and `cwd`) and decides with localStackFor, and for REGISTRY_COMMANDS by the stack's registry file. */
export async function findLocalStack(command: LocalLookup & { command?: string }, io: { env?: NodeJS.ProcessEnv; cwd?: string }): Promise<LocalStackDescriptor | undefined> {
  if (command.targetGiven) return undefined;
  const running = await readDescriptor(localDirFrom(io.env ?? {}, io.cwd));
  const own = localStackFor(command, running);
  if (own || !running || command.command === undefined || !REGISTRY_COMMANDS.has(command.command)) return own;
  if (command.command === 'add' || (await registeredIn(running.registryFile, command.clusterId))) return running;
  return undefined;
}

async function registeredIn(registryFile: string, clusterId: string): Promise<boolean> {
  try {
    const file = JSON.parse(await readFile(registryFile, 'utf8')) as { clusters?: Record<string, unknown> };
    return typeof file.clusters === 'object' && file.clusters !== null && Object.hasOwn(file.clusters, clusterId);
  } catch {
    return false;
  }
}
