/**
 * `npm run kube:build`: etcd, kube-apiserver, kube-controller-manager and kube-scheduler from
 * tools/kube's module, with the installed Go (GOTOOLCHAIN=local), cgo off, `-trimpath`, into
 * tools/kube/bin/ (gitignored) beside `versions.json`, the stamp that says what they were built
 * from. Go's caches make a second run seconds; `npm start` with VOLHOOK_KUBE=real builds only
 * when the stamp does not match the module (kubeBuildNeeded).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { goEnv, KUBE_MODULE_DIR } from './bump.js';
import { ETCD_SERVER_MODULE, kubeLdflags, moduleVersions } from './go-mod.js';

export const KUBE_BIN_DIR = join(KUBE_MODULE_DIR, 'bin');
const STAMP = 'versions.json';
const KUBE_MAINS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;

export interface KubeBinaries {
  etcd: string;
  apiserver: string;
  controllerManager: string;
  scheduler: string;
}

export function kubeBinaries(dir = KUBE_BIN_DIR): KubeBinaries {
  return {
    etcd: join(dir, 'etcd'),
    apiserver: join(dir, 'kube-apiserver'),
    controllerManager: join(dir, 'kube-controller-manager'),
    scheduler: join(dir, 'kube-scheduler'),
  };
}

export const KubeStampSchema = z.object({
  kubernetes: z.string(),
  etcd: z.string(),
  go: z.string(),
  /** sha256 of go.mod and go.sum: a bump (or an edit) makes the binaries stale. */
  module: z.string(),
  builtAt: z.string(),
});
export type KubeStamp = z.infer<typeof KubeStampSchema>;

/** The installed Go's `go version`, or undefined when there is no `go` on the PATH. */
export function goVersion(): string | undefined {
  const result = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8', env: goEnv() });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

/** sha256 of tools/kube/go.mod and go.sum, as the stamp holds it. */
export function moduleHash(): string {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum']) hash.update(readFileSync(join(KUBE_MODULE_DIR, file)));
  return hash.digest('hex');
}

export function readStamp(dir = KUBE_BIN_DIR): KubeStamp | undefined {
  try {
    return KubeStampSchema.parse(JSON.parse(readFileSync(join(dir, STAMP), 'utf8')));
  } catch {
    return undefined;
  }
}

/** Why the binaries must be (re)built, or undefined when they match the module and this Go. */
export function kubeBuildNeeded(go: string, dir = KUBE_BIN_DIR): string | undefined {
  const missing = Object.values(kubeBinaries(dir)).filter((path) => !existsSync(path));
  if (missing.length > 0) return `not built yet (no ${missing.map((p) => p.slice(dir.length + 1)).join(', ')} in ${dir})`;
  const stamp = readStamp(dir);
  if (!stamp) return `no ${STAMP} in ${dir}`;
  if (stamp.module !== moduleHash()) return `tools/kube/go.mod or go.sum changed since they were built (${stamp.kubernetes}, etcd ${stamp.etcd})`;
  if (stamp.go !== go) return `built with ${stamp.go}, the installed Go is ${go}`;
  return undefined;
}

export interface BuildProgress {
  /** A line for the person waiting. */
  say(line: string): void;
}

/**
 * Builds the four binaries, telling `progress` how many packages were compiled so far (Go
 * prints each it compiles with -v; a cached one is not compiled, so a warm run says little).
 */
export async function buildKube(progress: BuildProgress = { say: (line) => console.log(line) }): Promise<{ stamp: KubeStamp; seconds: number }> {
  const go = goVersion();
  if (!go) throw new Error('no `go` on the PATH: the real control plane is built from tools/kube with Go (see tools/kube/go.mod for the version)');
  const goMod = readFileSync(join(KUBE_MODULE_DIR, 'go.mod'), 'utf8');
  const versions = moduleVersions(goMod);
  mkdirSync(KUBE_BIN_DIR, { recursive: true });
  const started = Date.now();
  const elapsed = () => `${Math.round((Date.now() - started) / 1000)} s`;
  progress.say(`kube:build: Kubernetes ${versions.kubernetes} and etcd ${versions.etcd} with ${go}, into ${KUBE_BIN_DIR} (a first build takes 5 to 11 minutes on 2 cores; later ones seconds)`);
  let compiled = 0;
  let downloaded = 0;
  let last = '';
  const ticker = setInterval(
    () => progress.say(`kube:build: ${downloaded > 0 ? `${downloaded} modules downloaded, ` : ''}${compiled} packages compiled, ${elapsed()}${last ? ` (${last})` : ''}`),
    10_000,
  );
  ticker.unref();
  try {
    const run = (args: string[]) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn('go', args, { cwd: KUBE_MODULE_DIR, env: goEnv(), stdio: ['ignore', 'inherit', 'pipe'] });
        const errors: string[] = [];
        createInterface({ input: child.stderr }).on('line', (line) => {
          // -v names each package as it is compiled; anything else is Go saying something.
          if (/^[\w.-]+(\/[\w.~-]+)*$/.test(line)) {
            compiled++;
            last = line;
          } else if (line.startsWith('go: downloading ')) downloaded++;
          else errors.push(line);
        });
        child.on('error', reject);
        child.on('close', (code) => {
          if (code === 0) resolve();
          else reject(new Error(`go ${args.slice(0, 1).join(' ')} failed (exit ${code}):\n${errors.join('\n')}`));
        });
      });
    const common = ['build', '-v', '-trimpath'];
    await run([...common, '-ldflags', kubeLdflags(versions.kubernetes), '-o', `${KUBE_BIN_DIR}/`, ...KUBE_MAINS.map((main) => `k8s.io/kubernetes/cmd/${main}`)]);
    // etcd's version is a constant of its own module: nothing to stamp.
    await run([...common, '-ldflags', '-s -w', '-o', join(KUBE_BIN_DIR, 'etcd'), ETCD_SERVER_MODULE]);
  } finally {
    clearInterval(ticker);
  }
  const stamp: KubeStamp = { ...versions, go, module: moduleHash(), builtAt: new Date().toISOString() };
  const stampFile = join(KUBE_BIN_DIR, STAMP);
  writeFileSync(`${stampFile}.partial`, `${JSON.stringify(stamp, null, 2)}\n`);
  renameSync(`${stampFile}.partial`, stampFile);
  const seconds = (Date.now() - started) / 1000;
  progress.say(`kube:build: done in ${elapsed()}, ${compiled} packages compiled`);
  return { stamp, seconds };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildKube().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
