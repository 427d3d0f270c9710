/**
 * The fleet's EC2 as the backends reach it: a proxy in front of the simulator that shows every
 * call, once EC2 has carried it out, to the crash explorer's judges (test/crash/oracle.ts) —
 * one per cluster (the one whose kubernetes.io/cluster tag the volume bears), against that
 * cluster's store as it is then — and loses the answers of a
 * seeded share of the mutations EC2 carried out: the connection is cut before the answer is
 * written, as a network cut or a crashed function would lose it.
 */
import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http';
import { text } from 'node:stream/consumers';
import { listen } from '../../lib/http/index.js';
import type { Ec2Response, RunningEc2Simulator } from '../../lib/local/ec2/index.js';
import { changesVolumes, createVolumeTags, isMutation, namedVolumeIds, type Ec2Call } from '../../test/crash/ec2-transport.js';
import { Oracle } from '../../test/crash/oracle.js';
import { Rng } from '../../test/crash/rng.js';
import type { JudgedWorld } from '../../test/crash/world.js';

const CLUSTER_TAG = /^kubernetes\.io\/cluster\/(.+)$/;

export interface Ec2Judge {
  url: string;
  /** Each cluster's judge: what it found wrong, and what EC2 created for each name. */
  oracles: ReadonlyMap<string, Oracle>;
  /** Answers lost after EC2 carried the mutation out, by action. */
  lost: Record<string, number>;
  /** AttachVolume calls EC2 carried out whose attachment will never leave `attaching`. */
  stuck: number;
  /** The volumes of those calls, each with the performance.now() of its first stuck attach. */
  stuckVolumes: ReadonlyMap<string, number>;
  /** From now on, lose answers at this rate (0: none). */
  setLossRate(rate: number): void;
  stop(): Promise<void>;
}

export async function startEc2Judge(sim: RunningEc2Simulator, worlds: readonly JudgedWorld[], options: { seed: number; lossRate: number; timeScale: number }): Promise<Ec2Judge> {
  const rng = new Rng(options.seed ^ 0x5eed);
  let lossRate = options.lossRate;
  const lost: Record<string, number> = {};
  const oracles = new Map<string, Oracle>();
  const afterMutation = (action: string): boolean => {
    if (!rng.chance(lossRate)) return false;
    lost[action] = (lost[action] ?? 0) + 1;
    return true;
  };
  for (const world of worlds) {
    const oracle = new Oracle({ afterMutation }, () => {}, (id) => id, options.timeScale);
    oracle.world = world;
    oracles.set(world.clusterId, oracle);
  }
  const judge = { stuck: 0 };
  const stuckVolumes = new Map<string, number>();
  const target = new URL(sim.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await text(req);
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
      if (action === 'AttachVolume' && response.status === 200 && volumeId) {
        if (sim.sim.volume(volumeId)?.attachments.some((a) => a.stuck)) {
          judge.stuck++;
          if (!stuckVolumes.has(volumeId)) stuckVolumes.set(volumeId, performance.now());
        }
      }
      if (oracle?.observe(call)) return void res.destroy();
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    })().catch(() => res.destroy());
  });
  const listening = await listen(server, 0, '127.0.0.1');
  return {
    url: listening.url,
    oracles,
    lost,
    get stuck() {
      return judge.stuck;
    },
    stuckVolumes,
    setLossRate(rate) {
      lossRate = rate;
    },
    stop: () => {
      agent.destroy();
      return listening.close();
    },
  };
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
