/**
 * The fleet's EC2 as the backends reach it: a proxy in front of the simulator that shows every
 * call, once EC2 has carried it out, to the crash explorer's judges (test/crash/oracle.ts) —
 * one per cluster (the one whose kubernetes.io/cluster tag the volume bears), against that
 * cluster's store as it is then.
 */
import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Ec2Response, RunningEc2Simulator } from '../../lib/local/ec2/index.js';
import { changesVolumes, createVolumeTags, isMutation, namedVolumeIds, type Ec2Call } from '../../test/crash/ec2-transport.js';
import { Oracle } from '../../test/crash/oracle.js';
import type { JudgedWorld } from '../../test/crash/world.js';

const CLUSTER_TAG = /^kubernetes\.io\/cluster\/(.+)$/;

export interface Ec2Judge {
  url: string;
  /** Each cluster's judge: what it found wrong, and what EC2 created for each name. */
  oracles: ReadonlyMap<string, Oracle>;
  stop(): Promise<void>;
}

export async function startEc2Judge(sim: RunningEc2Simulator, worlds: readonly JudgedWorld[]): Promise<Ec2Judge> {
  const oracles = new Map<string, Oracle>();
  const afterMutation = (): boolean => false;
  for (const world of worlds) {
    const oracle = new Oracle({ afterMutation }, () => {}, (id) => id);
    oracle.world = world;
    oracles.set(world.clusterId, oracle);
  }
  const target = new URL(sim.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const params = new URLSearchParams(body);
      const action = params.get('Action') ?? '';
      const volumeId = isMutation(action) ? (params.get('VolumeId') ?? params.get('SourceVolumeId')) : null;
      const volumeBefore = volumeId ? sim.sim.volume(volumeId) : undefined;
      const volumesBefore = changesVolumes(action) ? namedVolumeIds(params).flatMap((id) => sim.sim.volume(id) ?? []) : undefined;
      const answer = await forward(agent, target, req, body);
      const response: Ec2Response = {
        status: answer.status,
        body: answer.body,
        requestId: String(answer.headers['x-amzn-requestid'] ?? ''),
        action,
        ...(answer.status !== 200 && { code: /<Code>([^<]+)<\/Code>/.exec(answer.body)?.[1] ?? '' }),
      };
      const tags = action === 'CreateVolume' ? Object.keys(createVolumeTags(params)) : (volumeBefore?.tags.map((t) => t.key) ?? []);
      const clusterId = tags.map((key) => CLUSTER_TAG.exec(key)?.[1]).find((id) => id !== undefined);
      const oracle = clusterId ? oracles.get(clusterId) : undefined;
      const call: Ec2Call = { action, params, response, ...(volumeBefore && { volumeBefore }), ...(volumesBefore && { volumesBefore }) };
      oracle?.observe(call);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    oracles,
    stop: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function forward(agent: Agent, target: URL, req: IncomingMessage, body: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const upstream = request(target, { method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks).toString('utf8') }));
      answer.on('error', reject);
    });
    upstream.on('error', reject);
    upstream.end(body);
  });
}
