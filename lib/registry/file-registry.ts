/**
 * Registrations from a local JSON file: `{ "clusters": { "<id>": { …registration } } }`.
 * The file is re-read when its modification time changes, so `npm run cluster -- rotate-secret`
 * takes effect on a running local stack without a restart.
 */
import { readFile, stat } from 'node:fs/promises';
import { normalize } from 'node:path';
import * as z from 'zod/mini';
import { deferred } from '../contract/deferred.js';
import { ClusterRegistrationSchema, RegistrationError, type ClusterRegistration, type ClusterRegistry } from './registration.js';

export const RegistryFileSchema = deferred(() => z.object({ clusters: z.record(z.string(), z.unknown()) }));
export type RegistryFile = z.infer<typeof RegistryFileSchema>;

/** Validates one stored registration; the error names the field that is wrong. */
export function parseRegistration(clusterId: string, raw: unknown): ClusterRegistration {
  const parsed = ClusterRegistrationSchema.safeParse(raw);
  if (!parsed.success) {
    throw new RegistrationError(`registration of cluster "${clusterId}" is malformed:\n${z.prettifyError(parsed.error)}`);
  }
  if (parsed.data.clusterId !== clusterId) {
    throw new RegistrationError(`registration stored as "${clusterId}" names cluster "${parsed.data.clusterId}"`);
  }
  return parsed.data;
}

/** The registrations file `npm run cluster -- add` writes when given no `--file`. */
export const DEFAULT_REGISTRY_FILE = '.volhook/clusters.json';

/**
 * No registrations file at all: no cluster was ever registered here (`npm run offline` before
 * any `cluster add`). Not a fault of one cluster, nor a bug: the backend says so, and how to fix it.
 */
export class RegistryMissingError extends Error {
  override readonly name = 'RegistryMissingError';
  constructor(readonly path: string) {
    super(registryMissingMessage(path));
  }
}

/** What to say when `path` does not exist: the file, and the command that creates it. */
export function registryMissingMessage(path: string): string {
  const file = normalize(path) === normalize(DEFAULT_REGISTRY_FILE) ? '' : ` --file ${path}`;
  return `no cluster is registered: the registrations file ${path} does not exist; create it by registering a cluster: npm run cluster -- add <id>${file}`;
}

export function createFileRegistry(path: string): ClusterRegistry {
  let cached: { version: string; file: RegistryFile } | undefined;

  async function load(): Promise<RegistryFile> {
    // The CLI replaces the file by rename, so a new inode marks a new version even when two
    // writes fall within one tick of the file system's clock.
    const { ino, size, mtimeMs } = await stat(path).catch((err: unknown) => {
      throw isNotFound(err) ? new RegistryMissingError(path) : err;
    });
    const version = `${ino}:${size}:${mtimeMs}`;
    if (cached?.version === version) return cached.file;
    const file = RegistryFileSchema.parse(JSON.parse(await readFile(path, 'utf8')));
    cached = { version, file };
    return file;
  }

  return {
    async get(clusterId) {
      const file = await load();
      const raw = Object.hasOwn(file.clusters, clusterId) ? file.clusters[clusterId] : undefined;
      return raw === undefined ? undefined : parseRegistration(clusterId, raw);
    },
  };
}

/** Registrations held in memory: for tests and for the local stack's built-in cluster. */
export function createStaticRegistry(registrations: readonly unknown[]): ClusterRegistry {
  const byId = new Map<string, unknown>();
  for (const raw of registrations) {
    const id = z.object({ clusterId: z.string() }).parse(raw).clusterId;
    byId.set(id, raw);
  }
  return {
    async get(clusterId) {
      const raw = byId.get(clusterId);
      return raw === undefined ? undefined : parseRegistration(clusterId, raw);
    },
  };
}

function isNotFound(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ENOENT';
}
