/**
 * The forwarder image's program: bin/forwarder.ts and every dependency in one ESM file. The
 * Dockerfile runs this file (`node infra/forwarder/bundle.ts <outfile>`, Node's own type
 * stripping: it imports only esbuild and Node's modules) and tests import it, so the bundle a
 * test starts is the one the image runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Plugin } from 'esbuild';

/** The Node major the image runs; the Dockerfile's base images and the esbuild target follow it. */
export const FORWARDER_NODE_MAJOR = 24;

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** esbuild options of the image's bundle, writing `outfile`. */
export function forwarderBundleOptions(outfile: string): BuildOptions {
  return {
    entryPoints: [join(repoRoot, 'bin/forwarder.ts')],
    outfile,
    bundle: true,
    minify: true,
    platform: 'node',
    target: `node${FORWARDER_NODE_MAJOR}`,
    format: 'esm',
    mainFields: ['module', 'main'],
    legalComments: 'none',
    // Bundled CommonJS code (client-node's dependencies) calls require(); ESM output needs one.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'error',
    // Loaded only to read a kubeconfig file out of the cluster (lib/forwarder/kube/source.ts).
    // Bundled, its 3.5 MiB of code would be parsed at start even unused: +19 MiB RSS idle.
    external: ['@kubernetes/client-node'],
    plugins: [packageVersionOnly],
  };
}

/**
 * lib/contract/version.ts imports package.json for volhook's version; the image carries that
 * version, read when the bundle is built, and none of the rest (the dependency lists).
 */
const packageVersionOnly: Plugin = {
  name: 'package-version-only',
  setup(builder) {
    const packageJson = join(repoRoot, 'package.json');
    builder.onLoad({ filter: /[\\/]package\.json$/ }, (args) => {
      if (args.path !== packageJson) return undefined;
      const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string };
      return { contents: JSON.stringify({ version }), loader: 'json' };
    });
  },
};

export async function buildForwarderBundle(outfile: string): Promise<void> {
  await build(forwarderBundleOptions(outfile));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outfile = process.argv[2];
  if (!outfile) {
    process.stderr.write('usage: node infra/forwarder/bundle.ts <outfile>\n');
    process.exit(2);
  }
  await buildForwarderBundle(outfile);
}
