/**
 * What tools/kube/go.mod says, and what a Kubernetes release's own go.mod asks of a module that
 * requires it: `k8s.io/kubernetes` points each staging module at `./staging/src/…`, a path
 * only its own repository has, so a consumer replaces each with the published module at the
 * matching v0 version (v1.36.3 → v0.36.3). Pure: bump.ts and build.ts do the I/O.
 */

export const KUBERNETES_MODULE = 'k8s.io/kubernetes';
export const ETCD_SERVER_MODULE = 'go.etcd.io/etcd/server/v3';

/**
 * The VolumeSnapshot CRDs' source: external-snapshotter's client module, at the version the
 * EBS CSI driver's chart pins its snapshotter to; its `config/crd/` holds the CRDs.
 */
export const SNAPSHOT_CRDS = { module: 'github.com/kubernetes-csi/external-snapshotter/client/v8', version: 'v8.6.0', dir: 'config/crd' } as const;

/** A go.mod's `require` of `module` (in a block or on its own line), or undefined. */
export function requiredVersion(goMod: string, module: string): string | undefined {
  const escaped = module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = goMod.match(new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm'));
  return match?.[1];
}

/** `v1.36.3` → `v0.36.3`: the staging modules' version for a Kubernetes release. */
export function stagingVersion(kubernetesVersion: string): string {
  const match = /^v1\.(\d+)\.(\d+)$/.exec(kubernetesVersion);
  if (!match) throw new Error(`not a Kubernetes release version: "${kubernetesVersion}" (expected v1.MINOR.PATCH)`);
  return `v0.${match[1]}.${match[2]}`;
}

export interface Replace {
  module: string;
  version: string;
}

/**
 * The replaces a consumer of that release needs: one per `k8s.io/NAME => ./staging/…` line
 * of the release's go.mod, each to the published module at the staging version.
 */
export function stagingReplaces(kubernetesGoMod: string, kubernetesVersion: string): Replace[] {
  const version = stagingVersion(kubernetesVersion);
  const replaces = [...kubernetesGoMod.matchAll(/^\s*(?:replace\s+)?(k8s\.io\/[\w.-]+)\s+=>\s+\.\/staging\/\S+\s*$/gm)].map((m) => ({ module: m[1]!, version }));
  if (replaces.length === 0) throw new Error(`the go.mod of ${KUBERNETES_MODULE} ${kubernetesVersion} has no ./staging replaces`);
  return replaces;
}

/** The modules a go.mod replaces (in a block or on lines of their own). */
export function replacedModules(goMod: string): string[] {
  const modules = new Set<string>();
  const block = goMod.match(/^replace\s*\(([\s\S]*?)^\)/m)?.[1] ?? '';
  for (const line of block.split('\n')) {
    const m = /^\s*(\S+)(?:\s+v\S+)?\s+=>/.exec(line);
    if (m) modules.add(m[1]!);
  }
  for (const m of goMod.matchAll(/^replace\s+(\S+)(?:\s+v\S+)?\s+=>/gm)) modules.add(m[1]!);
  return [...modules];
}

/** `module`'s version in every `require` of the go.mod set to `version` (it must be required already). */
function withRequire(goMod: string, module: string, version: string): string {
  const escaped = module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`^(\\s*(?:require\\s+)?${escaped}\\s+)v\\S+`, 'm');
  if (!pattern.test(goMod)) throw new Error(`the go.mod requires no ${module}`);
  return goMod.replace(pattern, `$1${version}`);
}

/**
 * tools/kube/go.mod moved to `kubernetesVersion`: it and the etcd server its go.mod requires
 * are required, and the replace block is that release's staging replaces, nothing else
 * (`go mod tidy` then settles the indirect requires).
 */
export function bumpedGoMod(currentGoMod: string, kubernetesGoMod: string, kubernetesVersion: string): string {
  const etcd = requiredVersion(kubernetesGoMod, ETCD_SERVER_MODULE);
  if (!etcd) throw new Error(`the go.mod of ${KUBERNETES_MODULE} ${kubernetesVersion} requires no ${ETCD_SERVER_MODULE}`);
  const replaces = stagingReplaces(kubernetesGoMod, kubernetesVersion);
  let goMod = withRequire(withRequire(currentGoMod, KUBERNETES_MODULE, kubernetesVersion), ETCD_SERVER_MODULE, etcd);
  goMod = goMod.replace(/^replace\s*\([\s\S]*?^\)\n?/gm, '').replace(/^replace\s+\S+.*=>.*\n?/gm, '').replace(/\n+$/, '\n');
  return `${goMod}\nreplace (\n${replaces.map((r) => `\t${r.module} => ${r.module} ${r.version}`).join('\n')}\n)\n`;
}

/** The versions a build of tools/kube stamps: Kubernetes (`-X …gitVersion`) and etcd (its own constant). */
export function moduleVersions(goMod: string): { kubernetes: string; etcd: string } {
  const kubernetes = requiredVersion(goMod, KUBERNETES_MODULE);
  const etcd = requiredVersion(goMod, ETCD_SERVER_MODULE);
  if (!kubernetes || !etcd) throw new Error(`tools/kube/go.mod must require ${KUBERNETES_MODULE} and ${ETCD_SERVER_MODULE}`);
  stagingVersion(kubernetes);
  return { kubernetes, etcd };
}

/** The `-ldflags` of kube-apiserver, -controller-manager and -scheduler: stripped, the version stamped as a release build stamps it. */
export function kubeLdflags(kubernetesVersion: string): string {
  const [, major, minor] = /^v(\d+)\.(\d+)\./.exec(kubernetesVersion) ?? [];
  const pkg = 'k8s.io/component-base/version';
  return ['-s', '-w', `-X ${pkg}.gitVersion=${kubernetesVersion}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`, `-X ${pkg}.gitTreeState=clean`].join(' ');
}
