/**
 * Picks the registry the deployment is configured for, first match wins:
 * - `VOLHOOK_REGISTRY_FILE`: a local JSON file (the local stack, `npm run offline`);
 * - `VOLHOOK_REGISTRY_SSM_PATH`: SSM Parameter Store under that path (deployed; see
 *   serverless.yml), cached for `VOLHOOK_REGISTRY_MAX_AGE_SECONDS` (default 60).
 */
import { createFileRegistry } from './file-registry.js';
import type { ClusterRegistry } from './registration.js';
import { createSsmRegistry, DEFAULT_REGISTRY_MAX_AGE_SECONDS } from './ssm-registry.js';

export function registryFromEnvironment(env: NodeJS.ProcessEnv): ClusterRegistry {
  if (env.VOLHOOK_REGISTRY_FILE) return createFileRegistry(env.VOLHOOK_REGISTRY_FILE);
  if (env.VOLHOOK_REGISTRY_SSM_PATH) {
    return createSsmRegistry({ path: env.VOLHOOK_REGISTRY_SSM_PATH, maxAgeSeconds: maxAgeFrom(env.VOLHOOK_REGISTRY_MAX_AGE_SECONDS) });
  }
  throw new Error('no cluster registry configured: set VOLHOOK_REGISTRY_FILE or VOLHOOK_REGISTRY_SSM_PATH');
}

function maxAgeFrom(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_REGISTRY_MAX_AGE_SECONDS;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 0) {
    throw new Error(`VOLHOOK_REGISTRY_MAX_AGE_SECONDS must be a whole number of seconds, not "${value}"`);
  }
  return seconds;
}
