/**
 * CopySnapshot under the EC2 role (infra/iam/ec2-role-statements.yml), sent to the destination
 * Region: a cluster's session may copy its own snapshots into copies tagged for it; another
 * cluster's source, or a copy not tagged for the session's cluster, is denied. An account guard
 * rail on aws:RequestedRegion (a deny outside the allowed Regions) refuses a destination it
 * does not list.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { authorizer, type IamPrincipal } from '../../lib/iam/evaluate.js';
import { authorizationRequests } from '../../lib/local/ec2/authorization.js';
import { QueryParams } from '../../lib/local/ec2/query.js';
import { seedSnapshots } from '../../lib/local/ec2/seed.js';
import { World } from '../../lib/local/ec2/world.js';
import { clusterSession, emptyWorld, REGION } from './fixtures.js';

const DESTINATION = 'us-west-2';
const OWNED_BY = (c: string) => ({ 'ebs.csi.aws.com/cluster': 'true', [`kubernetes.io/cluster/${c}`]: 'owned', 'volhook.io/cluster': c });

let source: World;
let destination: World;
const snapshots = {} as Record<'c1' | 'c2', string>;

beforeAll(() => {
  source = emptyWorld();
  const home = emptyWorld();
  destination = new World({ ...home.env, region: DESTINATION, zones: [] });
  destination.env.otherRegion = (r) => (r === REGION ? source : undefined);
  source.env.otherRegion = (r) => (r === DESTINATION ? destination : undefined);
  snapshots.c1 = seedSnapshots(source, { volumeId: 'vol-0123456789abcdef0', tags: OWNED_BY('c1') })[0]!.id;
  snapshots.c2 = seedSnapshots(source, { volumeId: 'vol-0123456789abcdef1', tags: OWNED_BY('c2') })[0]!.id;
});

const copyTags = (c: string) =>
  Object.fromEntries(
    Object.entries({ ...OWNED_BY(c), CSIVolumeSnapshotName: 'snapcontent-1' }).flatMap(([k, v], n) => [
      [`TagSpecification.1.Tag.${n + 1}.Key`, k],
      [`TagSpecification.1.Tag.${n + 1}.Value`, v],
    ]),
  );
const copy = (snapshotId: string, tags: Record<string, string>) => ({
  SourceRegion: REGION,
  SourceSnapshotId: snapshotId,
  'TagSpecification.1.ResourceType': 'snapshot',
  ...tags,
});

function requests(params: Record<string, string>) {
  return authorizationRequests('CopySnapshot', QueryParams.from(params), destination);
}

/** The session with an account guard rail: no EC2 call outside the Regions listed. */
function withAllowedRegions(session: IamPrincipal, regions: string[]): IamPrincipal {
  const guard = {
    Version: '2012-10-17' as const,
    Statement: [{ Effect: 'Deny' as const, Action: 'ec2:*', Resource: '*', Condition: { StringNotEquals: { 'aws:RequestedRegion': regions } } }],
  };
  return { ...session, policies: [...session.policies, { name: 'allowed-regions', document: guard }] };
}

describe('CopySnapshot under the EC2 role', () => {
  it('asks for the source in its Region and the copy in the destination, with CreateTags at creation', () => {
    const asked = requests(copy(snapshots.c1, copyTags('c1')));
    expect(asked.map((r) => [r.action, r.resource])).toEqual([
      ['ec2:CopySnapshot', `arn:aws:ec2:${REGION}::snapshot/${snapshots.c1}`],
      ['ec2:CopySnapshot', `arn:aws:ec2:${DESTINATION}::snapshot/*`],
      ['ec2:CreateTags', `arn:aws:ec2:${DESTINATION}::snapshot/*`],
    ]);
    for (const r of asked) expect(r.context['aws:RequestedRegion']).toBe(DESTINATION);
    expect(asked[2]?.context['ec2:CreateAction']).toBe('CopySnapshot');
  });

  it("c1's snapshot into a copy tagged for c1 -> allowed", async () => {
    expect(await authorizer(clusterSession('c1'))(requests(copy(snapshots.c1, copyTags('c1'))))).toEqual({ allowed: true });
  });

  it("c2's snapshot -> denied on the source", async () => {
    const decision = await authorizer(clusterSession('c1'))(requests(copy(snapshots.c2, copyTags('c1'))));
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.request.resource).toBe(`arn:aws:ec2:${REGION}::snapshot/${snapshots.c2}`);
  });

  it('a copy tagged for c2, or untagged -> denied on the copy', async () => {
    for (const tags of [copyTags('c2'), {}]) {
      const decision = await authorizer(clusterSession('c1'))(requests(copy(snapshots.c1, tags)));
      expect(decision.allowed).toBe(false);
      if (!decision.allowed) expect(decision.request.resource).toBe(`arn:aws:ec2:${DESTINATION}::snapshot/*`);
    }
  });

  it('a destination outside the Regions an account guard rail allows -> explicitly denied; inside -> allowed', async () => {
    const denied = await authorizer(withAllowedRegions(clusterSession('c1'), [REGION, 'eu-west-1']))(requests(copy(snapshots.c1, copyTags('c1'))));
    expect(denied).toMatchObject({ allowed: false, result: 'ExplicitlyDenied' });
    const allowed = await authorizer(withAllowedRegions(clusterSession('c1'), [REGION, DESTINATION]))(requests(copy(snapshots.c1, copyTags('c1'))));
    expect(allowed).toEqual({ allowed: true });
  });
});
