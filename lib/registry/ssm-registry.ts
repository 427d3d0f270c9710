/**
 * Registrations in SSM Parameter Store: one SecureString per cluster, named
 * `<path><clusterId>` (e.g. `/volhook/prod/clusters/c1`), holding the registration as JSON.
 *
 * Reads go through Powertools' SSMProvider, which caches each value per container for
 * `maxAgeSeconds`. A rotated secret therefore takes effect within that time; rotation keeps
 * the old secret accepted alongside the new one, so nothing is refused meanwhile.
 *
 * The provider and the SSM client are loaded on the first look-up, not at import: a bundle
 * keeps them in a chunk of their own, and a container that answers only /healthz never loads them.
 */
import type { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { parseRegistration } from './file-registry.js';
import { RegistrationError, type ClusterRegistry } from './registration.js';

export const DEFAULT_REGISTRY_MAX_AGE_SECONDS = 60;
/** Unknown cluster ids are remembered briefly, so a stream of them does not throttle SSM for everyone. */
export const DEFAULT_NOT_FOUND_MAX_AGE_SECONDS = 10;

export interface SsmRegistryOptions {
  /** Parameter path prefix, e.g. `/volhook/dev/clusters/`; a missing trailing slash is added. */
  path: string;
  /** Cache lifetime of a registration, seconds. */
  maxAgeSeconds?: number;
  /** Cache lifetime of "no such parameter", seconds; 0 disables. */
  notFoundMaxAgeSeconds?: number;
  /** The SSM client (tests, custom endpoints); otherwise one from the default chain. */
  client?: SSMClient;
  /** Epoch ms; for the not-found cache. */
  now?(): number;
}

/** `/volhook/dev/clusters` → `/volhook/dev/clusters/`; refuses what SSM would refuse. */
export function normalizeSsmPath(path: string): string {
  const withSlash = path.endsWith('/') ? path : `${path}/`;
  if (!/^\/[a-zA-Z0-9_.\-/]+\/$/.test(withSlash) || withSlash.includes('//')) {
    throw new Error(`"${path}" is not an SSM parameter path like /volhook/dev/clusters/`);
  }
  return withSlash;
}

/** The SSM parameter name of one cluster's registration. */
export function registrationParameterName(path: string, clusterId: string): string {
  return normalizeSsmPath(path) + clusterId;
}

/**
 * True for SSM's ParameterNotFound, whether raw or wrapped by Powertools (as `cause`). By name,
 * as the SDK names its service exceptions, so that this needs no class from the SSM client.
 */
export function isParameterNotFound(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++) {
    if (e.name === 'ParameterNotFound') return true;
  }
  return false;
}

export function createSsmRegistry(options: SsmRegistryOptions): ClusterRegistry {
  const path = normalizeSsmPath(options.path);
  const maxAge = options.maxAgeSeconds ?? DEFAULT_REGISTRY_MAX_AGE_SECONDS;
  const notFoundMaxAgeMs = (options.notFoundMaxAgeSeconds ?? DEFAULT_NOT_FOUND_MAX_AGE_SECONDS) * 1000;
  const now = options.now ?? Date.now;
  let provider: Promise<SSMProvider> | undefined;
  const loadProvider = () =>
    (provider ??= import('@aws-lambda-powertools/parameters/ssm').then(({ SSMProvider }) => new SSMProvider(options.client ? { awsSdkV3Client: options.client } : {})));
  const notFoundUntil = new Map<string, number>();

  return {
    async get(clusterId) {
      const name = path + clusterId;
      if ((notFoundUntil.get(clusterId) ?? 0) > now()) return undefined;

      let value: string | undefined;
      try {
        value = await (await loadProvider()).get(name, { decrypt: true, maxAge });
      } catch (err) {
        if (!isParameterNotFound(err)) throw err;
        if (notFoundMaxAgeMs > 0) {
          if (notFoundUntil.size > 1000) notFoundUntil.clear();
          notFoundUntil.set(clusterId, now() + notFoundMaxAgeMs);
        }
        return undefined;
      }
      notFoundUntil.delete(clusterId);
      if (value === undefined) return undefined;

      let raw: unknown;
      try {
        raw = JSON.parse(value);
      } catch {
        throw new RegistrationError(`registration of cluster "${clusterId}" in SSM parameter ${name} is not valid JSON`);
      }
      return parseRegistration(clusterId, raw);
    },
  };
}
