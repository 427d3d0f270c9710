/**
 * The HTTP transport of the real `@aws-sdk/client-ec2`, answered in-process by the EC2
 * simulator: the SDK signs, serializes and parses as always; the request body goes straight
 * to `Ec2Simulator.call`. No socket, no real time — and a place to watch every mutation and
 * to lose its answer after the simulator acted on it (the request reached EC2, the answer
 * never came back: a network cut, a timeout, a crashed function).
 */
import { STSClient } from '@aws-sdk/client-sts';
import { createClusterClients, createClusterSessions, createEc2Client, type ClusterClients } from '../../lib/ec2/index.js';
import { accessKeyOf, sessionTokenOf, signedRegionOf } from '../../lib/local/ec2/iam.js';
import type { Ec2Response, Ec2Simulator, Volume } from '../../lib/local/ec2/index.js';

/** The EC2 actions that change something. */
export const MUTATIONS = ['CreateVolume', 'AttachVolume', 'DetachVolume', 'DeleteVolume', 'ModifyVolume', 'CreateTags', 'CreateSnapshot', 'DeleteSnapshot', 'CopyVolumes', 'CreateSnapshots', 'CopySnapshot'] as const;
/** The mutations of snapshots, group snapshots, cross-Region copies, restores and clones (a restore is a CreateVolume). */
export const DATA_MUTATIONS: readonly Mutation[] = ['CreateSnapshot', 'DeleteSnapshot', 'CopyVolumes', 'CreateSnapshots', 'CopySnapshot'];
export type Mutation = (typeof MUTATIONS)[number];

export function isMutation(action: string): action is Mutation {
  return (MUTATIONS as readonly string[]).includes(action);
}

/** Whether the action changes the existing volumes it names: a mutation, or DeleteTags (a class change's tags removed). */
export function changesVolumes(action: string): boolean {
  return isMutation(action) || action === 'DeleteTags';
}

/** The existing volumes a call names: `VolumeId`, a copy's `SourceVolumeId`, a tag call's `ResourceId.N` that are volume IDs. */
export function namedVolumeIds(params: URLSearchParams): string[] {
  const ids = [params.get('VolumeId'), params.get('SourceVolumeId')];
  for (const [key, value] of params) if (/^ResourceId\.\d+$/.test(key)) ids.push(value);
  return [...new Set(ids.filter((id): id is string => id?.startsWith('vol-') === true))];
}

export interface Ec2Call {
  action: string;
  params: URLSearchParams;
  /** The Region the request is signed for (its SigV4 scope): the simulator serves it there. */
  region?: string;
  response: Ec2Response;
  /** For calls naming a `VolumeId`: the volume as it was just before the call. */
  volumeBefore?: Volume;
  /** For calls that change volumes: every existing volume the call names, as it was just before the call. */
  volumesBefore?: Volume[];
}

/** Told about every call once the simulator has answered it; returns true to lose the answer. */
export type Ec2CallObserver = (call: Ec2Call) => boolean;

/** What the SDK hands a request handler (the parts used here). */
interface SdkHttpRequest {
  body?: unknown;
  headers: Record<string, string | undefined>;
}

function bodyText(body: unknown): string {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  throw new Error(`unexpected EC2 request body of type ${typeof body}`);
}

/** The error a lost answer surfaces as in the SDK: a connection reset. */
export function lostAnswerError(action: string): Error {
  return Object.assign(new Error(`socket hang up (the answer to ${action} was lost by the crash explorer)`), { code: 'ECONNRESET' });
}

/**
 * A `requestHandler` for the SDK client. `observe` sees each call after the simulator acted
 * on it and may have its answer lost.
 */
export function simulatorTransport(sim: Ec2Simulator, observe: Ec2CallObserver) {
  return {
    metadata: { handlerProtocol: 'http/1.1' },
    async handle(request: SdkHttpRequest) {
      const params = new URLSearchParams(bodyText(request.body));
      const action = params.get('Action') ?? '';
      const volumeId = isMutation(action) ? (params.get('VolumeId') ?? params.get('SourceVolumeId')) : null;
      const volumeBefore = volumeId ? sim.volume(volumeId) : undefined;
      const volumesBefore = changesVolumes(action) ? namedVolumeIds(params).flatMap((id) => sim.volume(id) ?? []) : undefined;
      const region = signedRegionOf(request.headers['authorization'], new URLSearchParams());
      const response = await sim.call(Object.fromEntries(params), {
        accessKeyId: accessKeyOf(request.headers['authorization'], new URLSearchParams()),
        sessionToken: sessionTokenOf(request.headers['x-amz-security-token'], new URLSearchParams()),
        ...(region !== undefined && { region }),
      });
      if (observe({ action, params, response, ...(region !== undefined && { region }), ...(volumeBefore ? { volumeBefore } : {}), ...(volumesBefore ? { volumesBefore } : {}) })) throw lostAnswerError(action);
      return {
        response: {
          statusCode: response.status,
          headers: { 'content-type': 'text/xml;charset=UTF-8', 'x-amzn-requestid': response.requestId },
          body: new TextEncoder().encode(response.body),
        },
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs() {
      return {};
    },
    destroy() {},
  };
}

/**
 * The clusters' EC2 clients as the backend makes them — each cluster in its session of
 * `defaultRoleArn`, STS called with `backendKey` — with STS and EC2 both answered in-process over
 * {@link simulatorTransport}, one attempt each (a lost answer reaches the caller), the sessions'
 * expiry judged by `now` (the simulator's clock, which writes it).
 */
export function simulatorClusterClients(
  sim: Ec2Simulator,
  observe: Ec2CallObserver,
  options: { backendKey: string; defaultRoleArn: string; region: string; now(): number },
): ClusterClients {
  const transport = simulatorTransport(sim, observe) as never;
  const credentials = { accessKeyId: options.backendKey, secretAccessKey: 'in-process' };
  const sts = new STSClient({ region: options.region, credentials, requestHandler: transport, maxAttempts: 1 });
  return createClusterClients({
    sessions: createClusterSessions({ sts, now: options.now }),
    defaultRoleArn: options.defaultRoleArn,
    makeClient: (client) => createEc2Client({ ...client, requestHandler: transport, maxAttempts: 1 }),
  });
}

/** `TagSpecification.1.Tag.N.Key/Value` of a CreateVolume, as a record. */
export function createVolumeTags(params: URLSearchParams): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const [key, value] of params) {
    const m = /^TagSpecification\.(\d+)\.Tag\.(\d+)\.Key$/.exec(key);
    if (m) tags[value] = params.get(`TagSpecification.${m[1]}.Tag.${m[2]}.Value`) ?? '';
  }
  return tags;
}

/** The `<snapshotId>` of a CreateSnapshot answer. */
export function createdSnapshotId(body: string): string | undefined {
  return /<snapshotId>(snap-[0-9a-f]+)<\/snapshotId>/.exec(body)?.[1];
}

/** The snapshots of a CreateSnapshots answer's snapshotSet: each one's ID and the volume it is of. */
export function createdSnapshotSet(body: string): { snapshotId: string; volumeId: string }[] {
  // Each SnapshotInfo names its snapshot, then its volume (tags, nested items, come after).
  return body.split('<snapshotId>').slice(1).flatMap((part) => {
    const snapshotId = /^(snap-[0-9a-f]+)<\/snapshotId>/.exec(part)?.[1];
    const volumeId = /<volumeId>(vol-[0-9a-f]+)<\/volumeId>/.exec(part)?.[1];
    return snapshotId && volumeId ? [{ snapshotId, volumeId }] : [];
  });
}

/** The `<volumeId>` of a CreateVolume answer (the first in a CopyVolumes answer's volumeSet). */
export function createdVolumeId(body: string): string | undefined {
  return /<volumeId>(vol-[0-9a-f]+)<\/volumeId>/.exec(body)?.[1];
}
