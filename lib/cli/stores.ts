/**
 * Where the CLI reads and writes registrations: the local registry file the file registry
 * reads, or SSM Parameter Store as the SSM registry reads it (one SecureString per cluster).
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  DeleteParameterCommand,
  GetParameterCommand,
  ParameterAlreadyExists,
  PutParameterCommand,
  SSMClient,
} from '@aws-sdk/client-ssm';
import { RegistryFileSchema, type RegistryFile } from '../registry/file-registry.js';
import { RegistrationError } from '../registry/registration.js';
import { isParameterNotFound, registrationParameterName } from '../registry/ssm-registry.js';
import type { RegistryTarget } from './args.js';

export interface RegistrationStore {
  /** Where, for messages: `file .volhook/clusters.json`, `SSM parameter /volhook/dev/clusters/c1`. */
  describe(clusterId: string): string;
  /** The stored JSON, undefined when there is none. */
  read(clusterId: string): Promise<unknown | undefined>;
  /** Stores a new registration; throws AlreadyRegisteredError when one exists. */
  create(clusterId: string, registration: unknown): Promise<void>;
  replace(clusterId: string, registration: unknown): Promise<void>;
  /** false when there was nothing to delete. */
  delete(clusterId: string): Promise<boolean>;
}

export class AlreadyRegisteredError extends Error {
  override readonly name = 'AlreadyRegisteredError';
}

export function storeFor(target: RegistryTarget, ssmClient?: (region?: string) => SSMClient): RegistrationStore {
  if (target.kind === 'file') return createFileStore(target.path);
  const client = ssmClient ? ssmClient(target.region) : new SSMClient(target.region ? { region: target.region } : {});
  return createSsmStore(target.path, client);
}

/** The local registry file; written whole, atomically, readable by its owner only. */
export function createFileStore(path: string): RegistrationStore {
  async function load(): Promise<RegistryFile> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { clusters: {} };
      throw err;
    }
    try {
      return RegistryFileSchema.parse(JSON.parse(text));
    } catch {
      throw new RegistrationError(`${path} is not a registry file ({ "clusters": { "<id>": … } })`);
    }
  }
  async function save(file: RegistryFile): Promise<void> {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${randomUUID()}.tmp`;
    await writeFile(tmp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    await chmod(tmp, 0o600);
    await rename(tmp, path);
  }
  const has = (file: RegistryFile, id: string) => Object.hasOwn(file.clusters, id);

  return {
    describe: () => `file ${path}`,
    async read(clusterId) {
      const file = await load();
      return has(file, clusterId) ? file.clusters[clusterId] : undefined;
    },
    async create(clusterId, registration) {
      const file = await load();
      if (has(file, clusterId)) throw new AlreadyRegisteredError(`cluster "${clusterId}" is already registered in ${path}`);
      await save({ clusters: { ...file.clusters, [clusterId]: registration } });
    },
    async replace(clusterId, registration) {
      const file = await load();
      await save({ clusters: { ...file.clusters, [clusterId]: registration } });
    },
    async delete(clusterId) {
      const file = await load();
      if (!has(file, clusterId)) return false;
      const { [clusterId]: _removed, ...clusters } = file.clusters;
      await save({ clusters });
      return true;
    },
  };
}

/**
 * SSM: SecureString under the AWS managed key `aws/ssm`; Intelligent-Tiering so a large
 * registration (a CA and token for `writeBack: direct`) moves to the advanced tier instead
 * of failing the 4 KB standard limit.
 */
export function createSsmStore(path: string, client: SSMClient): RegistrationStore {
  const nameOf = (clusterId: string) => registrationParameterName(path, clusterId);
  const put = (clusterId: string, registration: unknown, overwrite: boolean) =>
    client.send(
      new PutParameterCommand({
        Name: nameOf(clusterId),
        Value: JSON.stringify(registration),
        Type: 'SecureString',
        Overwrite: overwrite,
        Tier: 'Intelligent-Tiering',
        ...(overwrite ? {} : { Description: `volhook registration of cluster ${clusterId}` }),
      }),
    );

  return {
    describe: (clusterId) => `SSM parameter ${nameOf(clusterId)}`,
    async read(clusterId) {
      let value: string | undefined;
      try {
        const out = await client.send(new GetParameterCommand({ Name: nameOf(clusterId), WithDecryption: true }));
        value = out.Parameter?.Value;
      } catch (err) {
        if (isParameterNotFound(err)) return undefined;
        throw err;
      }
      if (value === undefined) return undefined;
      try {
        return JSON.parse(value) as unknown;
      } catch {
        throw new RegistrationError(`SSM parameter ${nameOf(clusterId)} is not valid JSON`);
      }
    },
    async create(clusterId, registration) {
      try {
        await put(clusterId, registration, false);
      } catch (err) {
        if (err instanceof ParameterAlreadyExists || (err as Error).name === 'ParameterAlreadyExists') {
          throw new AlreadyRegisteredError(`cluster "${clusterId}" is already registered at ${nameOf(clusterId)}`);
        }
        throw err;
      }
    },
    async replace(clusterId, registration) {
      await put(clusterId, registration, true);
    },
    async delete(clusterId) {
      try {
        await client.send(new DeleteParameterCommand({ Name: nameOf(clusterId) }));
        return true;
      } catch (err) {
        if (isParameterNotFound(err)) return false;
        throw err;
      }
    },
  };
}
