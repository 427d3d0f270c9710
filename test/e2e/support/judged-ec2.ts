/**
 * The EC2 simulator on 127.0.0.1 with the crash explorer's oracle watching every call (the
 * same judges as test/crash: wrongly deleted or detached, volumes created twice for one name,
 * calls IAM refused), for end-to-end runs whose backends are processes of their own over HTTP.
 * The stack is then started on its URL (`ec2Endpoint`), and `judge(stack)` gives the judges
 * the cluster to read.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { deploymentIam } from '../../../lib/iam/role-policy.js';
import { listen } from '../../../lib/http/index.js';
import { DEFAULT_ACCOUNT_ID, Ec2Simulator, type Ec2SimulatorOptions } from '../../../lib/local/ec2/index.js';
import { accessKeyOf, sessionTokenOf } from '../../../lib/local/ec2/iam.js';
import type { LocalStack } from '../../../lib/local/stack/index.js';
import { BACKEND_CREDENTIALS } from '../../../lib/local/stack/stack.js';
import { changesVolumes, isMutation, namedVolumeIds } from '../../crash/ec2-transport.js';
import { Oracle } from '../../crash/oracle.js';
import type { JudgedWorld } from '../../crash/world.js';

export const REGION = 'us-east-1';
export const ZONES = [`${REGION}a`, `${REGION}b`, `${REGION}c`];
/** The deployment's IAM as the local stack has it: the backends sign as the Lambda role. */
export const DEPLOYMENT = deploymentIam({ backendKey: BACKEND_CREDENTIALS.accessKeyId, region: REGION, accountId: DEFAULT_ACCOUNT_ID });

export interface JudgedEc2 {
  url: string;
  sim: Ec2Simulator;
  oracle: Oracle;
  /** Calls that changed volumes before the judges had the world: none, or the run is not judged. */
  unjudged: readonly string[];
  /** What the judges read, once the stack runs. */
  judge(stack: Pick<LocalStack, 'clusterId' | 'store' | 'nodes'>): JudgedWorld;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startJudgedEc2(options: Omit<Ec2SimulatorOptions, 'region' | 'zones' | 'iam'> = {}): Promise<JudgedEc2> {
  const sim = new Ec2Simulator({ ...options, region: REGION, zones: ZONES, iam: { principals: DEPLOYMENT.principals, roles: DEPLOYMENT.roles } });
  const trace: string[] = [];
  const unjudged: string[] = [];
  const oracle = new Oracle({ afterMutation: () => false }, (line) => trace.push(line), (volumeId, csiName) => csiName ?? volumeId);
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const params = new URLSearchParams(req.method === 'POST' ? await bodyOf(req) : url.search.slice(1));
      const action = params.get('Action') ?? '';
      const volumeId = isMutation(action) ? (params.get('VolumeId') ?? params.get('SourceVolumeId')) : null;
      const volumeBefore = volumeId ? sim.volume(volumeId) : undefined;
      const volumesBefore = changesVolumes(action) ? namedVolumeIds(params).flatMap((id) => sim.volume(id) ?? []) : undefined;
      const response = await sim.call(Object.fromEntries(params), {
        accessKeyId: accessKeyOf(req.headers.authorization, url.searchParams),
        sessionToken: sessionTokenOf(req.headers['x-amz-security-token'], url.searchParams),
      });
      // Before the world is set (the stack launching its nodes) nothing of a volume may happen.
      if (!oracle.world) {
        if (changesVolumes(action)) unjudged.push(action);
      } else oracle.observe({ action, params, response, ...(volumeBefore ? { volumeBefore } : {}), ...(volumesBefore ? { volumesBefore } : {}) });
      res.writeHead(response.status, { 'content-type': 'text/xml;charset=UTF-8', 'x-amzn-requestid': response.requestId });
      res.end(response.body);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });
  const listening = await listen(server, 0, '127.0.0.1');
  return {
    url: listening.url,
    sim,
    oracle,
    unjudged,
    judge(stack) {
      const world: JudgedWorld = { clusterId: stack.clusterId, sim, store: stack.store, nodes: stack.nodes, clock: sim.clock };
      oracle.world = world;
      return world;
    },
    close: () => listening.close(),
  };
}
