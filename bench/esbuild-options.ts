/**
 * serverless.yml's `custom.esbuild` (what serverless-esbuild bundles the function with) as
 * esbuild options, so the cold-start benchmark measures the bundle that ships.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildOptions } from 'esbuild';
import { parse } from 'yaml';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

interface ServerlessEsbuild {
  bundle?: boolean;
  minify?: boolean;
  treeShaking?: boolean;
  sourcemap?: BuildOptions['sourcemap'];
  target?: string;
  platform?: BuildOptions['platform'];
  format?: BuildOptions['format'];
  outputFileExtension?: string;
  mainFields?: string[];
  banner?: Record<string, string>;
  exclude?: string[];
  external?: string[];
}

/** The `api` function's entry file and the esbuild options serverless.yml gives it. */
export function esbuildOptionsFromServerless(file = join(repoRoot, 'serverless.yml')): { entry: string; options: BuildOptions } {
  const config = parse(readFileSync(file, 'utf8')) as {
    functions: Record<string, { handler: string }>;
    custom: { esbuild: ServerlessEsbuild };
  };
  const handler = config.functions.api?.handler;
  if (!handler) throw new Error(`${file} has no functions.api.handler`);
  const entry = join(repoRoot, `${handler.slice(0, handler.lastIndexOf('.'))}.ts`);
  const e = config.custom.esbuild;
  const options: BuildOptions = {
    bundle: e.bundle ?? true,
    minify: e.minify ?? false,
    treeShaking: e.treeShaking,
    sourcemap: e.sourcemap ?? false,
    target: e.target ?? 'node20',
    platform: e.platform ?? 'node',
    format: e.format ?? 'cjs',
    outExtension: e.outputFileExtension ? { '.js': e.outputFileExtension } : {},
    mainFields: e.mainFields,
    banner: e.banner,
    external: [...(e.exclude ?? []), ...(e.external ?? [])],
  };
  return { entry, options };
}
