/**
 * Picks the registry the deployment is configured for:
 * `VOLHOOK_REGISTRY_FILE` (a local JSON file) — the only source until SSM support lands.
 */
import { createFileRegistry } from './file-registry.js';
import type { ClusterRegistry } from './registration.js';

export function registryFromEnvironment(env: NodeJS.ProcessEnv): ClusterRegistry {
  if (env.VOLHOOK_REGISTRY_FILE) return createFileRegistry(env.VOLHOOK_REGISTRY_FILE);
  throw new Error('no cluster registry configured: set VOLHOOK_REGISTRY_FILE');
}
