/**
 * `npm run bench:coldstart`: builds the Lambda bundle with the esbuild settings serverless.yml
 * gives serverless-esbuild (custom.esbuild, read from the file so the two cannot drift), then
 * reports its size (raw and gzip) — what a cold start loads, and what waits behind a dynamic
 * import — what takes the room, and the median time a fresh Node process needs to import it:
 * the part of a cold start the code controls.
 *
 * Beside it, with the same esbuild options, the same Node and alternating with it run by run,
 * a bare `@aws-sdk/client-ec2` bundle of the EC2Client and exactly the commands the function's
 * bundle holds (read from its metafile, so a command the gateway gains joins the baseline by
 * itself): the floor any function calling EC2 through the SDK pays. The ratio of the two
 * medians is what volhook adds to it. Figures only.
 *
 *   npm run bench:coldstart [-- --runs 9]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Metafile } from 'esbuild';
import { buildFunctionBundle, buildSplit, esbuildOptionsFromServerless, repoRoot, type OutputFile, type SplitBundle } from './esbuild-options.js';

const runsArg = process.argv.indexOf('--runs');
const runs = runsArg === -1 ? 9 : Number(process.argv[runsArg + 1]);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs needs a positive whole number');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
const rawOf = (files: OutputFile[]) => files.reduce((sum, f) => sum + f.contents.length, 0);
// Each file compressed alone, as a zip does.
const gzipOf = (files: OutputFile[]) => files.reduce((sum, f) => sum + gzipSync(f.contents, { level: 9 }).length, 0);

/** Bytes in the given output files per package (node_modules/<name>) or per top-level source folder. */
function contributors(metafile: Metafile, names: Set<string>): Array<[string, number]> {
  const totals = new Map<string, number>();
  for (const [output, { inputs }] of Object.entries(metafile.outputs)) {
    if (!names.has(output.split('/').pop()!)) continue;
    for (const [input, { bytesInOutput }] of Object.entries(inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const key = m ? m[1]! : input.split('/').slice(0, 2).join('/');
      totals.set(key, (totals.get(key) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].filter(([, bytes]) => bytes > 0).sort((a, b) => b[1] - a[1]);
}

/** The `@aws-sdk/client-ec2` commands a bundle holds (not just reads and shakes out), from its metafile. */
export function ec2CommandsIn(metafile: Metafile): string[] {
  const commands = new Set<string>();
  for (const { inputs } of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(inputs)) {
      const m = /node_modules\/@aws-sdk\/client-ec2\/dist-\w+\/commands\/(\w+Command)\.js$/.exec(input);
      if (m && bytesInOutput > 0) commands.add(m[1]!);
    }
  }
  return [...commands].sort();
}

function write(dir: string, bundle: SplitBundle): string {
  for (const f of bundle.files) {
    mkdirSync(dirname(join(dir, f.name)), { recursive: true });
    writeFileSync(join(dir, f.name), f.contents);
  }
  return join(dir, bundle.entry);
}

const work = mkdtempSync(join(tmpdir(), 'volhook-coldstart-'));
try {
  const fn = await buildFunctionBundle(join(work, 'function'));
  const commands = ec2CommandsIn(fn.metafile);
  if (commands.length === 0) throw new Error('the function bundle holds no @aws-sdk/client-ec2 command: nothing to compare with');
  const { options } = esbuildOptionsFromServerless();
  const baseline = await buildSplit(
    {
      ...options,
      stdin: {
        contents: `export { EC2Client, ${commands.join(', ')} } from '@aws-sdk/client-ec2';\n`,
        resolveDir: repoRoot,
        sourcefile: 'ec2-baseline.ts',
        loader: 'ts',
      },
    },
    join(work, 'baseline'),
  );

  console.log(`bundle  ${fn.source} -> ${fn.entry} (${options.format}, ${options.target}, minify=${options.minify}, splitting=${options.splitting})`);
  console.log(`size    ${kib(rawOf(fn.atImport))} raw, ${kib(gzipOf(fn.atImport))} gzip: ${fn.entry} and the ${fn.atImport.length - 1} chunks it imports (loaded at import)`);
  console.log(`lazy    ${kib(rawOf(fn.lazy))} raw, ${kib(gzipOf(fn.lazy))} gzip in ${fn.lazy.length} chunks loaded on first use`);
  console.log(`zip     ${fn.files.length} files, ${kib(rawOf(fn.files))} raw`);
  console.log('largest parts loaded at import:');
  for (const [name, bytes] of contributors(fn.metafile, new Set(fn.atImport.map((f) => f.name))).slice(0, 8)) {
    console.log(`  ${kib(bytes).padStart(9)}  ${name}`);
  }
  console.log('largest lazy parts:');
  for (const [name, bytes] of contributors(fn.metafile, new Set(fn.lazy.map((f) => f.name))).slice(0, 4)) {
    console.log(`  ${kib(bytes).padStart(9)}  ${name}`);
  }
  console.log(`baseline @aws-sdk/client-ec2: EC2Client + ${commands.length} commands (${commands.join(', ')})`);
  console.log(`size    ${kib(rawOf(baseline.atImport))} raw, ${kib(gzipOf(baseline.atImport))} gzip (loaded at import)`);
  const floor = new Map(contributors(baseline.metafile, new Set(baseline.atImport.map((f) => f.name))));
  const added = contributors(fn.metafile, new Set(fn.atImport.map((f) => f.name)))
    .map(([name, bytes]): [string, number] => [name, bytes - (floor.get(name) ?? 0)])
    .filter(([, bytes]) => bytes >= 1024)
    .sort((a, b) => b[1] - a[1]);
  console.log('loaded at import beyond the baseline:');
  for (const [name, bytes] of added.slice(0, 12)) console.log(`  ${kib(bytes).padStart(9)}  ${name}`);

  const fnPath = write(join(work, 'function'), fn);
  const baselinePath = write(join(work, 'baseline'), baseline);
  // A fresh process per run: nothing cached in V8, the OS file cache warm after the first.
  const env = {
    PATH: process.env.PATH,
    AWS_REGION: 'us-east-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    VOLHOOK_REGISTRY_SSM_PATH: '/volhook/bench/clusters/',
    VOLHOOK_REPLAY_TABLE: 'volhook-bench-webhook-ids',
    POWERTOOLS_SERVICE_NAME: 'volhook',
    POWERTOOLS_METRICS_NAMESPACE: 'volhook',
  };
  const importOnce = (file: string) => {
    const script = `const t0 = performance.now(), c0 = process.cpuUsage(); await import(${JSON.stringify(pathToFileURL(file).href)}); const c = process.cpuUsage(c0); console.log(JSON.stringify({ importMs: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 }));`;
    const started = performance.now();
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' });
    const processMs = performance.now() - started;
    if (child.status !== 0) throw new Error(`importing ${file} failed:\n${child.stderr}`);
    const line = child.stdout.trim().split('\n').pop()!;
    return { ...(JSON.parse(line) as { importMs: number; cpuMs: number }), processMs };
  };
  importOnce(fnPath); // warms the OS file cache for both, measured by neither
  importOnce(baselinePath);
  const fnImports: number[] = [];
  const fnCpu: number[] = [];
  const fnProcesses: number[] = [];
  const baseImports: number[] = [];
  const baseCpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    // Alternating, so that a noisy moment on the machine hits both about alike.
    const f = importOnce(fnPath);
    fnImports.push(f.importMs);
    fnCpu.push(f.cpuMs);
    fnProcesses.push(f.processMs);
    const b = importOnce(baselinePath);
    baseImports.push(b.importMs);
    baseCpu.push(b.cpuMs);
  }
  const fmt = (values: number[]) => `median ${median(values).toFixed(0)} ms (min ${Math.min(...values).toFixed(0)}, max ${Math.max(...values).toFixed(0)})`;
  console.log(`import  ${fmt(fnImports)} over ${runs} fresh node ${process.version} processes`);
  console.log(`process ${fmt(fnProcesses)} from spawn to exit`);
  console.log(`baseline import ${fmt(baseImports)} over ${runs} fresh processes, alternating with the function's`);
  console.log(`ratio   ${(median(fnImports) / median(baseImports)).toFixed(2)} (function import median / baseline import median)`);
  // CPU time of the import (user + system): what the code costs, less shaken by a busy machine than wall time.
  console.log(`cpu     function median ${median(fnCpu).toFixed(0)} ms, baseline median ${median(baseCpu).toFixed(0)} ms, ratio ${(median(fnCpu) / median(baseCpu)).toFixed(2)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
