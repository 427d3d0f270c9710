/**
 * What a running `npm start` leaves in its local directory (default `.volhook/local`, or
 * VOLHOOK_LOCAL_DIR) so that `npm run cluster -- audit local` finds it with no flags: the
 * stack's registration file, its reports directory, and `stack.json` naming them with the
 * EC2 endpoint. `stack.json` goes when the stack stops; one left by a stack that died is
 * recognised by its process id and ignored.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as z from 'zod';

export const DEFAULT_LOCAL_DIR = '.volhook/local';
const DESCRIPTOR = 'stack.json';

export const LocalStackDescriptorSchema = z.object({
  clusterId: z.string().min(1),
  region: z.string().min(1),
  ec2Endpoint: z.url(),
  backendUrl: z.url(),
  kubeUrl: z.url(),
  /** The kubeconfig of the stack's Kubernetes (`KUBECONFIG=… kubectl`). */
  kubeconfig: z.optional(z.string().min(1)),
  /** The registrations file the stack's backend reads. */
  registryFile: z.string().min(1),
  /** The directory of the backend's volume reports (lib/reports/file.ts). */
  reportsDir: z.string().min(1),
  pid: z.number().int().positive(),
});
export type LocalStackDescriptor = z.infer<typeof LocalStackDescriptorSchema>;

/** The local directory: VOLHOOK_LOCAL_DIR, else `.volhook/local` under `cwd`. */
export function localDirFrom(env: NodeJS.ProcessEnv, cwd = process.cwd()): string {
  return resolve(cwd, env.VOLHOOK_LOCAL_DIR?.trim() || DEFAULT_LOCAL_DIR);
}

export const localPaths = (dir: string) => ({
  descriptor: join(dir, DESCRIPTOR),
  kubeconfig: join(dir, 'kubeconfig'),
  registryFile: join(dir, 'clusters.json'),
  reportsDir: join(dir, 'reports'),
});

export async function writeDescriptor(dir: string, descriptor: LocalStackDescriptor): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(localPaths(dir).descriptor, `${JSON.stringify(descriptor, null, 2)}\n`, { mode: 0o600 });
}

export async function removeDescriptor(dir: string, pid = process.pid): Promise<void> {
  const current = await readDescriptor(dir, { alive: () => true });
  if (current?.pid === pid) await rm(localPaths(dir).descriptor, { force: true });
}

/** The descriptor of a stack that is running now, or undefined. */
export async function readDescriptor(dir: string, options: { alive?(pid: number): boolean } = {}): Promise<LocalStackDescriptor | undefined> {
  let text: string;
  try {
    text = await readFile(localPaths(dir).descriptor, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const parsed = LocalStackDescriptorSchema.safeParse(JSON.parse(text));
  if (!parsed.success) return undefined;
  return (options.alive ?? isAlive)(parsed.data.pid) ? parsed.data : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
