/**
 * The reference EBS CSI controller stack from Go modules (tools/ebs-csi/components.json): one
 * consumer module per component, whose go.mod is generated from the component's own go.mod
 * (its `replace` lines, which differ per component), then `go build` of each binary with
 * GOTOOLCHAIN=local CGO_ENABLED=0 into tools/ebs-csi/bin/ (gitignored).
 *
 *   npm run ebs-csi:build                         build every component (progress on stdout, go's output in bin/build.log)
 *   npm run ebs-csi:build -- build NAME…          build these
 *   npm run ebs-csi:build -- generate [NAME[@V]…] regenerate go.mod (and go.sum, by go mod tidy); with @V, bump to V first
 *   npm run ebs-csi:build -- smoke                every binary answers --version; the driver serves CSI in controller mode
 *                                                 on a unix socket against the EC2 simulator (see {@link smoke})
 *
 * A relative replace (`=> ./client`) cannot be followed from outside the component's
 * repository: it is dropped, and the module is required at the component's own version
 * (components.json `sameVersionModules`) before the first `go mod tidy` — else tidy takes
 * the newest, whose k8s.io line may not build with the component's. Any other relative
 * replace is refused, naming it.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ebsCsiDriverPrincipals, startEc2Simulator } from '../../lib/local/ec2/index.js';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const EBS_CSI_DIR = join(ROOT, 'tools', 'ebs-csi');
export const EBS_CSI_BIN = join(EBS_CSI_DIR, 'bin');
const COMPONENTS_FILE = join(EBS_CSI_DIR, 'components.json');

const Component = z.strictObject({
  name: z.string().regex(/^[a-z0-9-]+$/),
  module: z.string().min(1),
  version: z.string().regex(/^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/),
  binaries: z.array(z.strictObject({ name: z.string().regex(/^[a-z0-9-]+$/), package: z.string().min(1) })).min(1),
  /** `-X` targets set to the version (the component's Makefile's). */
  versionVariables: z.array(z.string().min(1)),
  /** Modules of the component's repository it replaces relatively: required at the component's version instead. */
  sameVersionModules: z.array(z.string().min(1)).optional(),
});
export type Component = z.infer<typeof Component>;

const ComponentsFile = z.strictObject({ $comment: z.string().optional(), components: z.array(Component).min(1) });
type ComponentsFile = z.infer<typeof ComponentsFile>;

export function readComponents(): ComponentsFile {
  return ComponentsFile.parse(JSON.parse(readFileSync(COMPONENTS_FILE, 'utf8')));
}

/** One `replace` directive of a go.mod: `old [v] => new [v]`. */
export interface Replace {
  from: string;
  fromVersion?: string;
  to: string;
  toVersion?: string;
}

/** The `replace` directives of a go.mod, single-line and in blocks, comments dropped. */
export function parseReplaces(goMod: string): Replace[] {
  const out: Replace[] = [];
  let inBlock = false;
  for (const raw of goMod.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (line === '') continue;
    if (inBlock) {
      if (line === ')') inBlock = false;
      else out.push(parseReplaceSpec(line));
      continue;
    }
    if (/^replace\s*\($/.test(line)) inBlock = true;
    else if (/^replace\s/.test(line)) out.push(parseReplaceSpec(line.slice('replace'.length).trim()));
  }
  return out;
}

function parseReplaceSpec(spec: string): Replace {
  const m = /^(\S+)(?:\s+(\S+))?\s*=>\s*(\S+)(?:\s+(\S+))?$/.exec(spec);
  if (!m) throw new Error(`cannot read the replace directive ${JSON.stringify(spec)}`);
  return { from: m[1] as string, fromVersion: m[2], to: m[3] as string, toVersion: m[4] };
}

/** The `go` directive of a go.mod. */
export function goDirective(goMod: string): string {
  const m = /^go\s+(\S+)\s*$/m.exec(goMod);
  if (!m) throw new Error('the go.mod has no go directive');
  return m[1] as string;
}

const isRelative = (path: string) => path.startsWith('./') || path.startsWith('../');

/**
 * The consumer module's go.mod for a component, from the component's own go.mod: its go
 * directive, a require of the component (and of each `sameVersionModules` at its version), a
 * `tool` line per binary, and the component's replaces minus the relative ones it covers.
 */
export function consumerGoMod(component: Component, componentGoMod: string): string {
  const replaces = parseReplaces(componentGoMod);
  const same = component.sameVersionModules ?? [];
  const relative = replaces.filter((r) => isRelative(r.to));
  const unknown = relative.filter((r) => !same.includes(r.from));
  if (unknown.length > 0) {
    throw new Error(
      `${component.module}@${component.version} replaces ${unknown.map((r) => `${r.from} => ${r.to}`).join(', ')} relatively, which cannot be followed from outside its repository; name the module in components.json sameVersionModules to require it at ${component.version}`,
    );
  }
  const kept = replaces.filter((r) => !isRelative(r.to));
  const requires = [[component.module, component.version], ...same.map((m) => [m, component.version])];
  const side = (path: string, version: string | undefined) => (version ? `${path} ${version}` : path);
  return [
    `// Generated by \`npm run ebs-csi:build -- generate ${component.name}\` from ${component.module}@${component.version}'s go.mod. Do not edit.`,
    `module volhook.local/tools/ebs-csi/${component.name}`,
    '',
    `go ${goDirective(componentGoMod)}`,
    '',
    'require (',
    ...requires.map(([m, v]) => `\t${m} ${v}`),
    ')',
    '',
    ...component.binaries.map((b) => `tool ${b.package}`),
    ...(kept.length > 0 ? ['', 'replace (', ...kept.map((r) => `\t${side(r.from, r.fromVersion)} => ${side(r.to, r.toVersion)}`), ')'] : []),
    '',
  ].join('\n');
}

const GO_ENV = { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' };

function componentGoMod(component: Component): string {
  const info = z
    .object({ GoMod: z.string().optional(), Error: z.string().optional() })
    .parse(JSON.parse(execFileSync('go', ['mod', 'download', '-json', `${component.module}@${component.version}`], { env: GO_ENV, encoding: 'utf8', cwd: EBS_CSI_DIR })));
  if (info.Error || !info.GoMod) throw new Error(`go mod download ${component.module}@${component.version}: ${info.Error ?? 'no go.mod'}`);
  return readFileSync(info.GoMod, 'utf8');
}

/** Writes the component's consumer go.mod and tidies it (go.sum). */
export function generate(component: Component): void {
  const dir = join(EBS_CSI_DIR, component.name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'go.mod'), consumerGoMod(component, componentGoMod(component)));
  execFileSync('go', ['mod', 'tidy'], { cwd: dir, env: GO_ENV, stdio: 'inherit' });
}

function run(cmd: string, args: string[], cwd: string, log: NodeJS.WritableStream, onLine: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: GO_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let rest = '';
    const take = (chunk: Buffer) => {
      log.write(chunk);
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      lines.forEach(onLine);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code} (see ${join(EBS_CSI_BIN, 'build.log')})`))));
  });
}

const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);

/** Builds each binary of the components named (all by default), reporting progress; returns the binaries' paths. */
export async function build(components: readonly Component[]): Promise<string[]> {
  mkdirSync(EBS_CSI_BIN, { recursive: true });
  const log = createWriteStream(join(EBS_CSI_BIN, 'build.log'), { flags: 'a' });
  const built: string[] = [];
  const total = components.reduce((n, c) => n + c.binaries.length, 0);
  const start = Date.now();
  try {
    for (const component of components) {
      const dir = join(EBS_CSI_DIR, component.name);
      if (!existsSync(join(dir, 'go.mod'))) throw new Error(`${dir}/go.mod is missing: run npm run ebs-csi:build -- generate ${component.name}`);
      const ldflags = ['-s', '-w', ...component.versionVariables.map((v) => `-X ${v}=${component.version}`)].join(' ');
      for (const binary of component.binaries) {
        const out = join(EBS_CSI_BIN, binary.name);
        const began = Date.now();
        let packages = 0;
        const ticker = setInterval(() => console.log(`  ${binary.name}: ${packages} packages compiled, ${seconds(began)} s`), 15_000);
        console.log(`[${built.length + 1}/${total}] ${binary.name} (${component.module} ${component.version})`);
        log.write(`\n=== ${new Date().toISOString()} ${binary.name} ${component.module}@${component.version}\n`);
        try {
          await run('go', ['build', '-v', '-trimpath', '-ldflags', ldflags, '-o', out, binary.package], dir, log, () => packages++);
        } finally {
          clearInterval(ticker);
        }
        const mb = (statSync(out).size / 1e6).toFixed(0);
        console.log(`  ${binary.name}: built in ${seconds(began)} s (${packages} packages compiled, ${mb} MB) -> ${out}`);
        built.push(out);
      }
    }
  } finally {
    log.end();
  }
  console.log(`built ${built.length} binaries in ${seconds(start)} s`);
  return built;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`smoke: ${what} not seen in ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

/**
 * By hand, not CI (a test of a peer scenario needs the real control plane): each binary
 * prints its version; the driver starts in controller mode on a unix socket with the EC2
 * simulator as its endpoint and a key held to AmazonEBSCSIDriverPolicy; csi-provisioner,
 * given a kubeconfig of a closed port, connects to that socket and probes the driver, whose
 * Probe is a dry-run DescribeAvailabilityZones the simulator must see answered DryRunOperation.
 */
export async function smoke(): Promise<void> {
  const { components } = readComponents();
  for (const c of components) {
    for (const b of c.binaries) {
      const path = join(EBS_CSI_BIN, b.name);
      if (!existsSync(path)) throw new Error(`smoke: ${path} is missing: run npm run ebs-csi:build`);
      const out = execFileSync(path, ['--version'], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
      if (!out.includes(c.version)) throw new Error(`smoke: ${b.name} --version does not name ${c.version}: ${out}`);
      console.log(`${b.name} --version: ${out.replace(/\s+/g, ' ')}`);
    }
  }
  const key = 'AKIAEBSCSISMOKE00001';
  const sim = await startEc2Simulator({ throttling: false, timeScale: 10, iam: { principals: ebsCsiDriverPrincipals(key) } });
  const dir = mkdtempSync(join(tmpdir(), 'ebs-csi-smoke-'));
  const socket = join(dir, 'csi.sock');
  const children: ChildProcess[] = [];
  const start = (name: string, args: string[], env: NodeJS.ProcessEnv = process.env) => {
    const log = createWriteStream(join(dir, `${name}.log`));
    const child = spawn(join(EBS_CSI_BIN, name), args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    children.push(child);
    return child;
  };
  try {
    const driver = start('aws-ebs-csi-driver', ['controller', `--endpoint=unix://${socket}`, '--batching=true', '--v=4'], {
      ...process.env,
      AWS_EC2_ENDPOINT: sim.url,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: key,
      AWS_SECRET_ACCESS_KEY: 'smoke',
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    await until('the driver’s socket', () => existsSync(socket) || driver.exitCode !== null, 30_000);
    if (driver.exitCode !== null) throw new Error(`smoke: the driver exited ${driver.exitCode} (log: ${join(dir, 'aws-ebs-csi-driver.log')})`);
    console.log(`driver: serving CSI on ${socket}`);
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\nusers: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n',
    );
    start('csi-provisioner', [`--csi-address=${socket}`, `--kubeconfig=${kubeconfig}`, '--leader-election=false', '--feature-gates=Topology=true', '--extra-create-metadata', '--timeout=60s']);
    const probed = () => (sim.sim.getStats().actions.DescribeAvailabilityZones?.errors.DryRunOperation ?? 0) > 0;
    await until('the driver’s Probe (dry-run DescribeAvailabilityZones) at the simulator', probed, 60_000);
    if (driver.exitCode !== null) throw new Error(`smoke: the driver exited ${driver.exitCode}`);
    console.log(`driver: probed through csi-provisioner; EC2 calls seen: ${JSON.stringify(Object.fromEntries(Object.entries(sim.sim.getStats().actions).map(([a, s]) => [a, s])))}`);
    console.log(`smoke passed (logs in ${dir})`);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await sim.close();
  }
  rmSync(join(dir, 'csi.sock'), { force: true });
}

/** `NAME` or `NAME@VERSION` against the table; unknown names are refused, naming the known ones. */
function pick(file: ComponentsFile, args: readonly string[]): { components: Component[]; bumped: boolean } {
  if (args.length === 0) return { components: file.components, bumped: false };
  let bumped = false;
  const components = args.map((arg) => {
    const [name, version] = arg.split('@') as [string, string | undefined];
    const found = file.components.find((c) => c.name === name);
    if (!found) throw new Error(`no component ${JSON.stringify(name)} (components: ${file.components.map((c) => c.name).join(', ')})`);
    if (version !== undefined && version !== found.version) {
      found.version = Component.shape.version.parse(version);
      bumped = true;
    }
    return found;
  });
  return { components, bumped };
}

async function main(argv: readonly string[]): Promise<void> {
  const [command = 'build', ...rest] = argv;
  const file = readComponents();
  if (command === 'generate') {
    const { components, bumped } = pick(file, rest);
    if (bumped) writeFileSync(COMPONENTS_FILE, JSON.stringify(file, null, 2) + '\n');
    for (const c of components) {
      console.log(`generating ${c.name}/go.mod from ${c.module}@${c.version}`);
      generate(c);
    }
    return;
  }
  if (command === 'build') {
    const versioned = rest.filter((a) => a.includes('@'));
    if (versioned.length > 0) throw new Error(`build takes component names; to change a version run generate ${versioned.join(' ')}`);
    const { components } = pick(file, rest);
    await build(components);
    return;
  }
  if (command === 'smoke') {
    if (rest.length > 0) throw new Error(`smoke takes no arguments (given ${rest.join(' ')})`);
    return smoke();
  }
  throw new Error(`unknown command ${JSON.stringify(command)}: build [NAME…], generate [NAME[@VERSION]…] or smoke`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
