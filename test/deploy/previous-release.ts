/**
 * The previous release, as the skew test runs it: found by its tag, else by the commit
 * release/releases.json records (lib/release/locate.ts), archived from git into a temporary
 * directory with node_modules linked to this checkout's (the lockfile decides both), its
 * forwarder bundled by its own infra/forwarder/bundle.ts, and its local stack started, without
 * a forwarder, in a process of its own from its own lib/local/stack — the function its own
 * end-to-end tests start, with the options it had then.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitIn, latestBefore, locateRelease, parseReleases, RELEASES_FILE, type Release } from '../../lib/release/index.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface PreviousRelease {
  release: Release;
  via: 'tag' | 'record';
  /** The archived tree. */
  dir: string;
  /** Its forwarder's bundle, built by its own bundle.ts. */
  bundle: string;
  remove(): void;
}

/** The release before HEAD, archived and bundled; throws saying why when this clone lacks it. */
export function previousRelease(): PreviousRelease {
  const git = gitIn(repoRoot);
  const releases = parseReleases(readFileSync(join(repoRoot, RELEASES_FILE), 'utf8'));
  const release = latestBefore(releases, git.run(['rev-parse', 'HEAD']));
  if (!release) throw new Error(`${RELEASES_FILE} records no release before HEAD`);
  const located = locateRelease(git, release);
  if ('problem' in located) throw new Error(`the skew test needs the previous release: ${located.problem}`);

  const dir = mkdtempSync(join(tmpdir(), `volhook-${release.version}-`));
  try {
    const archive = execFileSync('git', ['archive', '--format=tar', located.commit], { cwd: repoRoot, maxBuffer: 256 * 1024 * 1024 });
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
    symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const bundle = join(dir, 'dist', 'forwarder.mjs');
    // As its Dockerfile builds it: `node infra/forwarder/bundle.ts <outfile>`, on this Node (the lockfile's).
    execFileSync(process.execPath, [join(dir, 'infra/forwarder/bundle.ts'), bundle], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    return { release, via: located.via, dir, bundle, remove: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export interface OldStack {
  urls: { backend: string; ec2: string; kube: string };
  clusterId: string;
  region: string;
  secret: string;
  nodes: Array<{ name: string; zone: string; instanceId: string }>;
  output(): string;
  stop(): Promise<void>;
}

/** What the old tree's process runs: its startLocalStack, no forwarder, as fast as its e2e tests run it. */
const STACK_SCRIPT = `
import { startLocalStack } from './lib/local/stack/index.js';
const stack = await startLocalStack({
  ports: { backend: 0, ec2: 0, kube: 0 },
  forwarder: false,
  ec2: { timeScale: 40, seed: 42 },
  controllers: { resyncIntervalMs: 200 },
});
const { urls, clusterId, region, secret, nodes } = stack;
process.stdout.write('STACK ' + JSON.stringify({ urls, clusterId, region, secret, nodes }) + '\\n');
process.on('SIGTERM', () => void stack.stop().then(() => process.exit(0)));
`;

/** The previous release's local stack (EC2 simulator, Kubernetes API and controllers, its backend) in its own process. */
export async function startOldStack(previous: PreviousRelease, timeoutMs = 60_000): Promise<OldStack> {
  const script = join(previous.dir, 'skew-stack.ts');
  writeFileSync(script, STACK_SCRIPT);
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: previous.dir,
    env: { PATH: process.env.PATH, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const described = await new Promise<Omit<OldStack, 'output' | 'stop'>>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`the ${previous.release.version} stack did not start within ${timeoutMs} ms:\n${output.join('').slice(-3000)}`)), timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      output.push(chunk.toString('utf8'));
      const line = buffered.split('\n').find((l) => l.startsWith('STACK '));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line.slice('STACK '.length)) as Omit<OldStack, 'output' | 'stop'>);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the ${previous.release.version} stack exited (${code}) before it started:\n${output.join('').slice(-3000)}`));
    });
  });
  return {
    ...described,
    output: () => output.join(''),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
