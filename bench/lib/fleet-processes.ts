/**
 * The processes of a scaled-out bench, as deployed: backend processes (each its own process and
 * EC2 client, as Lambda instances are), one URL in front of them that deals requests out in turn
 * (as API Gateway does), and moto_server for the DynamoDB tables they share.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, createServer, request, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as z from 'zod';
import { listen } from '../../lib/http/index.js';
import type { LocalStack } from '../../lib/local/stack/index.js';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** EC2 calls and tokens per action, summed over the backend processes (their `/_bench/stats`). */
export const BackendStatsSchema = z.record(
  z.string(),
  z.object({
    calls: z.number(),
    throttles: z.number(),
    errors: z.number(),
    errorCodes: z.record(z.string(), z.number()),
    tokensGranted: z.number(),
    tokensWaited: z.number(),
    takes: z.number(),
  }),
);
export type BackendStats = z.infer<typeof BackendStatsSchema>;

export interface BackendProcess {
  url: string;
  stats(): Promise<BackendStats>;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
  /** SIGKILL at once: requests in flight get no answer. */
  kill(): Promise<void>;
  /** The lines it wrote to stderr (its errors) since the last call. */
  takeErrorLines(): string[];
}

/** The URL a backend-process.ts child prints (`READY <url>`) once it listens; refused if it exits first or takes 60 s. */
export function readyUrl(child: ChildProcess, errors: () => string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`backend process not ready in 60 s: ${errors()}`)), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /READY (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`backend process exited (${code}): ${errors()}`));
    });
  });
}

/** One bench/lib/backend-process.ts, ready once it prints its URL. */
export async function startBackendProcess(env: NodeJS.ProcessEnv): Promise<BackendProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'bench/lib/backend-process.ts')], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  let unread: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    errors = (errors + text).slice(-10_000);
    unread = [...unread, ...text.split('\n').filter((line) => line.trim() !== '')].slice(-1_000);
  });
  const url = await readyUrl(child, () => errors);
  return {
    url,
    takeErrorLines() {
      const lines = unread;
      unread = [];
      return lines;
    },
    async stats() {
      const res = await fetch(`${url}/_bench/stats`);
      return BackendStatsSchema.parse(await res.json());
    },
    stop: () => stopChild(child),
    kill: () => killChild(child),
  };
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export interface RoundRobin {
  url: string;
  /** Requests it was sent so far. */
  readonly requests: number;
  /** The same, by `<method> <path>` (a copy). */
  byRoute(): Record<string, number>;
  /** The longest a request took to be answered (or to fail) since the last call, in ms, and which backend took it. */
  slowestSinceLast(): { ms: number; target: string } | undefined;
  /** Sends the `index`th share of requests to `target` from now on (a backend replaced). */
  replace(index: number, target: string): void;
  stop(): Promise<void>;
}

/** One URL in front of the backends: each request goes to the next one, in turn. */
export async function startRoundRobin(initial: readonly string[]): Promise<RoundRobin> {
  const targets = [...initial];
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let turn = 0;
  let requests = 0;
  const routes: Record<string, number> = {};
  let slowest: { ms: number; target: string } | undefined;
  const server: Server = createServer((req, res) => {
    requests++;
    const route = `${req.method} ${(req.url ?? '/').split('?')[0]}`;
    routes[route] = (routes[route] ?? 0) + 1;
    const target = new URL(req.url ?? '/', targets[turn++ % targets.length]);
    const started = performance.now();
    res.on('close', () => {
      const ms = performance.now() - started;
      if (!slowest || ms > slowest.ms) slowest = { ms, target: target.host };
    });
    const upstream = request(target, { method: req.method, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      // A backend killed mid-answer: the client sees the connection cut, as from a gateway.
      answer.on('aborted', () => res.destroy());
    });
    upstream.on('error', (err) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'bad_gateway', message: err.message } }));
    });
    req.pipe(upstream);
  });
  const listening = await listen(server, 0, '127.0.0.1');
  return {
    url: listening.url,
    get requests() {
      return requests;
    },
    byRoute: () => ({ ...routes }),
    slowestSinceLast() {
      const was = slowest;
      slowest = undefined;
      return was;
    },
    replace(index, target) {
      targets[index] = target;
    },
    stop: () => {
      agent.destroy();
      return listening.close();
    },
  };
}

/** moto_server on a free loopback port, up once it answers. */
export async function startMotoServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'ignore'] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const res = await fetch(`${url}/moto-api/`);
      if (res.ok) break;
    } catch {
      // not up yet
    }
    if (child.exitCode !== null) throw new Error('moto_server exited; is it installed (pip install "moto[server]")?');
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error(`moto_server did not answer on ${url} within 60 s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url, stop: () => stopChild(child) };
}

/** Tables keyed by `pk`, as serverless.yml declares the budget, replay and report tables. */
export async function createTables(endpoint: string, region: string, names: readonly string[]): Promise<void> {
  const client = new DynamoDBClient({ region, endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    for (const TableName of names) {
      await client.send(
        new CreateTableCommand({
          TableName,
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
    }
  } finally {
    client.destroy();
  }
}

export function sumStats(all: BackendStats[]): BackendStats {
  const out: BackendStats = {};
  for (const stats of all) {
    for (const [action, s] of Object.entries(stats)) {
      const into = (out[action] ??= { calls: 0, throttles: 0, errors: 0, errorCodes: {}, tokensGranted: 0, tokensWaited: 0, takes: 0 });
      into.calls += s.calls;
      into.throttles += s.throttles;
      into.errors += s.errors;
      for (const [code, n] of Object.entries(s.errorCodes)) into.errorCodes[code] = (into.errorCodes[code] ?? 0) + n;
      into.tokensGranted += s.tokensGranted;
      into.tokensWaited += s.tokensWaited;
      into.takes += s.takes;
    }
  }
  return out;
}

export interface ForwarderProcess {
  child: ChildProcess;
  /** Its Lease identity, with leader election. */
  leader?: { identity: string; namespace: string };
  /** Its health and metrics port, when it was given one. */
  port?: number;
  /** The tail of its stderr. */
  errors: string;
  /** Asked to stop (the end of the run): its exit is no news. */
  stopping: boolean;
}

/**
 * A forwarder replica as its pod runs it (bin/forwarder.ts) against `apiUrl` for `stack`'s
 * cluster: with leader election on one Lease when `leader` is given; `port` for its health and
 * metrics (default any free one, unknown here); `env` for other settings (VOLHOOK_RESYNC_SECONDS…).
 */
export function startForwarderProcess(options: {
  apiUrl: string;
  stack: Pick<LocalStack, 'clusterId' | 'secret' | 'urls'>;
  leader?: { identity: string; namespace: string };
  port?: number;
  env?: Record<string, string>;
  /** The send cadence's grid (bench/lib/forwarder-process.ts); the forwarder's default without. */
  cadenceMs?: number;
  log(line: string): void;
}): ForwarderProcess {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    VOLHOOK_API_URL: options.apiUrl,
    VOLHOOK_CLUSTER_ID: options.stack.clusterId,
    VOLHOOK_SECRET: options.stack.secret,
    VOLHOOK_KUBE_SERVER: options.stack.urls.kube,
    VOLHOOK_PORT: String(options.port ?? 0),
    VOLHOOK_LISTEN_HOST: '127.0.0.1',
    ...(options.leader && {
      VOLHOOK_LEADER_ELECT: 'true',
      VOLHOOK_LEASE_NAMESPACE: options.leader.namespace,
      VOLHOOK_LEADER_IDENTITY: options.leader.identity,
    }),
    VOLHOOK_LOG_LEVEL: 'warn',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...(options.cadenceMs !== undefined && { VOLHOOK_BENCH_CADENCE_MS: String(options.cadenceMs) }),
    ...options.env,
  };
  delete env.NODE_OPTIONS;
  const entry = options.cadenceMs !== undefined ? 'bench/lib/forwarder-process.ts' : 'bin/forwarder.ts';
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const replica: ForwarderProcess = { child, errors: '', stopping: false, ...(options.leader && { leader: options.leader }), ...(options.port !== undefined && { port: options.port }) };
  const name = options.leader?.identity ?? options.stack.clusterId;
  child.stderr?.on('data', (chunk: Buffer) => {
    replica.errors = (replica.errors + chunk.toString()).slice(-4_000);
  });
  child.once('exit', (code, signal) => {
    if (!replica.stopping && signal !== 'SIGKILL') options.log(`forwarder ${name} exited (${code ?? signal}): ${replica.errors}`);
  });
  return replica;
}

/** A loopback port free now (for a child told its port up front). */
export async function freePort(): Promise<number> {
  const probe = await listen(createServer(), 0, '127.0.0.1');
  await probe.close();
  return probe.port;
}
