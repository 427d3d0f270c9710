/**
 * `npm run bench:coldstart`: builds the Lambda bundle with the esbuild settings serverless.yml
 * gives serverless-esbuild (custom.esbuild, read from the file so the two cannot drift), then
 * reports its size (raw and gzip), what takes the room, and the median time a fresh Node
 * process needs to import it — the part of a cold start the code controls. Figures only.
 *
 *   npm run bench:coldstart [-- --runs 7]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { esbuildOptionsFromServerless, repoRoot as root } from './esbuild-options.js';
const runsArg = process.argv.indexOf('--runs');
const runs = runsArg === -1 ? 7 : Number(process.argv[runsArg + 1]);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs needs a positive whole number');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

/** Bytes in the output per package (node_modules/<name>) or per top-level source folder. */
function contributors(metafile: Metafile): Array<[string, number]> {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const key = m ? m[1]! : input.split('/').slice(0, 2).join('/');
      totals.set(key, (totals.get(key) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].sort((a, b) => b[1] - a[1]);
}

const outdir = mkdtempSync(join(tmpdir(), 'volhook-coldstart-'));
try {
  const { entry, options } = esbuildOptionsFromServerless();
  const result = await build({ ...options, entryPoints: [entry], outdir, metafile: true, logLevel: 'error' });
  const bundle = Object.keys(result.metafile.outputs).find((f) => !f.endsWith('.map'))!;
  const bundlePath = join(process.cwd(), bundle);
  const raw = statSync(bundlePath).size;
  const gzip = gzipSync(readFileSync(bundlePath), { level: 9 }).length;

  console.log(`bundle  ${relative(root, entry)} -> ${bundle.split('/').pop()} (${options.format}, ${options.target}, minify=${options.minify})`);
  console.log(`size    ${kib(raw)} raw, ${kib(gzip)} gzip`);
  console.log('largest parts:');
  for (const [name, bytes] of contributors(result.metafile).slice(0, 8)) {
    console.log(`  ${kib(bytes).padStart(9)}  ${name}`);
  }

  // A fresh process per run: nothing cached in V8, the OS file cache warm after the first.
  const script = `const t0 = performance.now(); await import(${JSON.stringify(pathToFileURL(bundlePath).href)}); console.log(JSON.stringify({ importMs: performance.now() - t0 }));`;
  const env = {
    PATH: process.env.PATH,
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    VOLHOOK_REGISTRY_SSM_PATH: '/volhook/bench/clusters/',
    POWERTOOLS_SERVICE_NAME: 'volhook',
    POWERTOOLS_METRICS_NAMESPACE: 'volhook',
  };
  const imports: number[] = [];
  const processes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' });
    processes.push(performance.now() - started);
    if (child.status !== 0) throw new Error(`importing the bundle failed:\n${child.stderr}`);
    const line = child.stdout.trim().split('\n').pop()!;
    imports.push((JSON.parse(line) as { importMs: number }).importMs);
  }
  const fmt = (values: number[]) => `median ${median(values).toFixed(0)} ms (min ${Math.min(...values).toFixed(0)}, max ${Math.max(...values).toFixed(0)})`;
  console.log(`import  ${fmt(imports)} over ${runs} fresh node ${process.version} processes`);
  console.log(`process ${fmt(processes)} from spawn to exit`);
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
