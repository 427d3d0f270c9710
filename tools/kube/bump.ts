/**
 * `npm run kube:bump -- v1.36.4`: moves tools/kube to another Kubernetes release in one
 * command — its go.mod (from the module proxy, `go mod download -json`) gives the staging
 * replaces and the etcd version (go-mod.ts writes them), `go mod tidy` the rest. With no
 * argument it regenerates the replaces of the release go.mod requires now.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { bumpedGoMod, KUBERNETES_MODULE, replacedModules, requiredVersion } from './go-mod.js';

export const KUBE_MODULE_DIR = fileURLToPath(new URL('.', import.meta.url));

const DownloadSchema = z.object({ GoMod: z.string().min(1), Version: z.string() });

/** Go as every step here runs it: the installed toolchain only (never a download), no cgo. */
export function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0' };
}

function go(args: string[], options: { cwd?: string } = {}): string {
  return execFileSync('go', args, { cwd: options.cwd ?? KUBE_MODULE_DIR, encoding: 'utf8', env: goEnv(), stdio: ['ignore', 'pipe', 'inherit'] });
}

export function bump(version?: string): { version: string; replaces: number } {
  const goModFile = `${KUBE_MODULE_DIR}go.mod`;
  const current = readFileSync(goModFile, 'utf8');
  const target = version ?? requiredVersion(current, KUBERNETES_MODULE);
  if (!target) throw new Error(`${goModFile} requires no ${KUBERNETES_MODULE}; name a version: npm run kube:bump -- v1.36.3`);
  // Outside the module, so that the download leaves its go.mod and go.sum alone.
  const download = DownloadSchema.parse(JSON.parse(go(['mod', 'download', '-json', `${KUBERNETES_MODULE}@${target}`], { cwd: tmpdir() })));
  const next = bumpedGoMod(current, readFileSync(download.GoMod, 'utf8'), download.Version);
  writeFileSync(goModFile, next);
  go(['mod', 'tidy']);
  return { version: download.Version, replaces: replacedModules(next).length };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { version, replaces } = bump(process.argv[2]);
  console.log(`tools/kube: ${KUBERNETES_MODULE} ${version}, ${replaces} staging replaces; now npm run kube:build`);
}
