/**
 * The changes the cluster CLI makes to a registration, as pure functions over its stored
 * JSON. Fields the CLI does not know are kept as they are; results are validated with the
 * same schema the backend reads them with.
 */
import { parseRegistration } from '../registry/file-registry.js';
import type { RegistrationSettings } from './args.js';

export type StoredRegistration = Record<string, unknown> & { secrets: string[] };

export interface KubeCredentials {
  token?: string;
  caData?: string;
}

/** A new registration accepting exactly `secret`; only the settings given are stored. */
export function newRegistration(clusterId: string, settings: RegistrationSettings, secret: string, kube: KubeCredentials = {}): StoredRegistration {
  const { kubernetes, ...rest } = settings;
  const stored: StoredRegistration = {
    clusterId,
    secrets: [secret],
    ...rest,
    ...(kubernetes ? { kubernetes: { server: kubernetes.server, ...kube } } : {}),
  };
  parseRegistration(clusterId, stored);
  return stored;
}

/** Checks a stored registration and returns it with its secrets typed. */
export function readStored(clusterId: string, raw: unknown): StoredRegistration {
  const parsed = parseRegistration(clusterId, raw);
  return { ...(raw as Record<string, unknown>), secrets: [...parsed.secrets] };
}

/** Rotation, step 1: the new secret is appended; the old ones stay accepted. */
export function addSecret(stored: StoredRegistration, secret: string): StoredRegistration {
  return { ...stored, secrets: [...stored.secrets, secret] };
}

/** Rotation, step 2: only the newest (last added) secret stays accepted. */
export function keepNewestSecret(stored: StoredRegistration): StoredRegistration {
  return { ...stored, secrets: stored.secrets.slice(-1) };
}
