import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen } from '../../http/index.js';
import { systemClock, type Clock } from './clock.js';
import type { Ec2RuntimeConfig, Ec2SimulatorOptions } from './config.js';
import type { RunInstancesRequest } from './instances.js';
import type { SeedVolumeRequest } from './seed.js';
import { accessKeyOf, sessionTokenOf, signedRegionOf } from './iam.js';
import { QueryParams } from './query.js';
import { Ec2Simulator } from './simulator.js';
import type { Ec2Account } from './account-view.js';

/** A running simulator: its endpoint, in-process access, and how to stop it. */
export interface RunningEc2Simulator {
  /** `http://host:port`, for the SDK's `endpoint` or the CLI's `--endpoint-url`. */
  url: string;
  port: number;
  sim: Ec2Simulator;
  close(): Promise<void>;
}

/** Admin paths live under `/_sim/`, which no EC2 request uses (EC2 posts to `/`). */
export const ADMIN_PREFIX = '/_sim/';
const MAX_BODY = 1 << 20;

/**
 * Starts the EC2 simulator on `host:port` (127.0.0.1, and a free port for 0). `clock`
 * replaces the wall clock, e.g. with a ManualClock in tests.
 */
export async function startEc2Simulator(
  options: Ec2SimulatorOptions = {},
  clock: Clock = systemClock,
): Promise<RunningEc2Simulator> {
  const sim = new Ec2Simulator(options, clock);
  const server = createServer((req, res) => {
    handle(sim, req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(err));
      } else res.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  const { url, port, close } = await listen(server, options.port ?? 0, options.host ?? '127.0.0.1');
  return {
    url,
    port,
    sim,
    close: async () => {
      sim.flush();
      await close();
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function handle(sim: Ec2Simulator, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname.startsWith(ADMIN_PREFIX)) return admin(sim, req, res, url.pathname.slice(ADMIN_PREFIX.length), url.searchParams.get('account'), url.searchParams.get('region'));
  const body = req.method === 'POST' ? await readBody(req) : url.search.slice(1);
  const out = await sim.call(QueryParams.parse(body), {
    accessKeyId: accessKeyOf(req.headers.authorization, url.searchParams),
    sessionToken: sessionTokenOf(req.headers['x-amz-security-token'], url.searchParams),
    region: signedRegionOf(req.headers.authorization, url.searchParams),
  });
  res.writeHead(out.status, {
    'content-type': 'text/xml;charset=UTF-8',
    'x-amzn-requestid': out.requestId,
    server: 'AmazonEC2',
    date: new Date().toUTCString(),
  });
  res.end(out.body);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value, null, 2));
}

async function readJson<T>(req: IncomingMessage): Promise<T> {
  const text = await readBody(req);
  return (text.trim() === '' ? {} : JSON.parse(text)) as T;
}

/**
 * `GET stats`, `POST reset-stats`, `GET|POST config`, `GET state`, `GET buckets`, `POST reset`,
 * `POST instances` (body: RunInstancesRequest fields; answers the instance), `POST volumes`
 * (body: SeedVolumeRequest; answers the volumes), `GET accounts`. Each but `config` (shared by
 * every account) and `accounts` takes `?account=<id>` to address an account other than the
 * simulator's own; `POST reset` without it resets every account, with it that account only.
 * Likewise `?region=<name>` addresses a further Region (`GET regions` lists them); `POST reset`
 * with it resets that Region of the account (the simulator's own unless `?account=` names another).
 */
async function admin(sim: Ec2Simulator, req: IncomingMessage, res: ServerResponse, path: string, account: string | null, region: string | null): Promise<void> {
  const route = `${req.method ?? 'GET'} ${path}`;
  if (account !== null && !sim.accountIds().includes(account)) {
    return json(res, 404, { error: `the simulator holds no account ${JSON.stringify(account)} (it holds ${sim.accountIds().join(', ')})` });
  }
  if (region !== null && !sim.regionNames().includes(region)) {
    return json(res, 404, { error: `the simulator holds no Region ${JSON.stringify(region)} (it holds ${sim.regionNames().join(', ')})` });
  }
  const inAccount: Ec2Account = account === null ? sim : sim.account(account);
  const view = region === null ? inAccount : inAccount.inRegion(region);
  try {
    switch (route) {
      case 'GET stats':
        return json(res, 200, view.getStats());
      case 'POST reset-stats':
        view.resetStats();
        return json(res, 200, view.getStats());
      case 'GET config':
      case 'POST config':
      case 'GET accounts':
      case 'GET regions':
        if (account !== null || region !== null) return json(res, 400, { error: `${route} is the same for every account and Region and takes no ?account= or ?region=` });
        if (route === 'GET accounts') return json(res, 200, sim.accountIds());
        if (route === 'GET regions') return json(res, 200, sim.regionNames());
        return json(res, 200, route === 'GET config' ? sim.config() : sim.configure(await readJson<Ec2RuntimeConfig>(req)));
      case 'GET state':
        return json(res, 200, view.state());
      case 'GET buckets':
        return json(res, 200, view.buckets());
      case 'POST reset':
        if (account === null && region === null) sim.reset();
        else view.resetAccount();
        return json(res, 200, { ok: true });
      case 'POST volumes':
        return json(res, 201, view.seedVolumes(await readJson<SeedVolumeRequest>(req)));
      case 'POST instances':
        return json(res, 201, view.runInstance(await readJson<Partial<RunInstancesRequest>>(req)));
      default:
        return json(res, 404, { error: `no admin route ${route}` });
    }
  } catch (err) {
    return json(res, 400, { error: err instanceof Error ? err.message : String(err) });
  }
}
