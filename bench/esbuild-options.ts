/**
 * serverless.yml's `custom.esbuild` (what serverless-esbuild bundles the function with) as
 * esbuild options, so the cold-start benchmark measures the bundle that ships, and the build
 * of that bundle split into what a cold start loads and what it loads later, if ever.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Metafile } from 'esbuild';
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
  splitting?: boolean;
  outputFileExtension?: string;
  mainFields?: string[];
  banner?: Record<string, string>;
  exclude?: string[];
  external?: string[];
}

/** A function's entry file (the `api` function's by default) and the esbuild options serverless.yml gives it. */
export function esbuildOptionsFromServerless(file = join(repoRoot, 'serverless.yml'), fn = 'api'): { entry: string; options: BuildOptions } {
  const config = parse(readFileSync(file, 'utf8')) as {
    functions: Record<string, { handler: string }>;
    custom: { esbuild: ServerlessEsbuild };
  };
  const handler = config.functions[fn]?.handler;
  if (!handler) throw new Error(`${file} has no functions.${fn}.handler`);
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
    splitting: e.splitting ?? false,
    outExtension: e.outputFileExtension ? { '.js': e.outputFileExtension } : {},
    mainFields: e.mainFields,
    banner: e.banner,
    external: [...(e.exclude ?? []), ...(e.external ?? [])],
  };
  return { entry, options };
}

/** One output file of a build: its name in the output folder and its bytes. */
export interface OutputFile {
  name: string;
  contents: Uint8Array;
}

export interface SplitBundle {
  /** The entry file, e.g. `api.mjs`. */
  entry: string;
  /** Every file the build wrote (what the deployment zip must hold), by name. */
  files: OutputFile[];
  /** The entry and every chunk it imports statically, directly or not: what a cold start loads. */
  atImport: OutputFile[];
  /** Chunks reached only through `import()`: loaded on first use, if ever. */
  lazy: OutputFile[];
  metafile: Metafile;
}

/**
 * Builds `entryPoints` (one file path) or `stdin` with `options` in memory and sorts the output into what an
 * import of the entry loads and what stays behind a dynamic import.
 */
export async function buildSplit(options: BuildOptions, outdir: string): Promise<SplitBundle> {
  const result = await build({ ...options, outdir, write: false, metafile: true, logLevel: 'silent' });
  const nameOf = (path: string) => relative(outdir, join(process.cwd(), path));
  const contents = new Map(result.outputFiles.map((f) => [relative(outdir, f.path), f.contents]));
  const outputs = new Map(Object.entries(result.metafile.outputs).map(([path, meta]) => [nameOf(path), meta]));
  // Chunks behind import() name an entryPoint too: the build's own is the one it was given.
  const given = options.stdin ? (options.stdin.sourcefile ?? '<stdin>') : relative(process.cwd(), (options.entryPoints as string[])[0]!);
  const entries = [...outputs].filter(([, meta]) => meta.entryPoint === given).map(([name]) => name);
  if (entries.length !== 1) throw new Error(`expected one output for the entry point ${given}, got ${entries.join(', ') || 'none'}`);
  const entry = entries[0]!;

  const atImport = new Set<string>();
  const visit = (name: string) => {
    if (atImport.has(name)) return;
    atImport.add(name);
    for (const imported of outputs.get(name)?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(nameOf(imported.path));
    }
  };
  visit(entry);

  const file = (name: string): OutputFile => {
    const bytes = contents.get(name);
    if (!bytes) throw new Error(`esbuild reported ${name} but wrote no such file`);
    return { name, contents: bytes };
  };
  const files = [...contents.keys()].sort().map(file);
  return {
    entry,
    files,
    atImport: files.filter((f) => atImport.has(f.name)),
    lazy: files.filter((f) => !atImport.has(f.name)),
    metafile: result.metafile,
  };
}

/** The `api` function's bundle as serverless-esbuild builds it for the zip. */
export async function buildFunctionBundle(outdir: string, fn = 'api'): Promise<SplitBundle & { source: string }> {
  const { entry, options } = esbuildOptionsFromServerless(undefined, fn);
  return { ...(await buildSplit({ ...options, entryPoints: [entry] }, outdir)), source: relative(repoRoot, entry) };
}
