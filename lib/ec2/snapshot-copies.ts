/**
 * The cluster's snapshots in another Region of its account (RegionSnapshots): its cross-Region
 * copies. Every call goes to that Region's endpoint, signed for it, in the cluster's session:
 * CopySnapshot is sent to the destination Region and names the source's (SourceRegion).
 */
import { CopySnapshotCommand, DeleteSnapshotCommand } from '@aws-sdk/client-ec2';
import { snapshotIdentityTags } from '../contract/tags.js';
import type { Ec2Context } from './describe.js';
import { tagList, toSnapshot } from './mapping.js';
import { describeSnapshotsByIds, describeSnapshotsByNames, malformedSnapshotName } from './snapshots.js';
import { isWellFormedName } from './describe.js';
import { Ec2Error, isEc2Error, type RegionSnapshots } from './types.js';

export function regionSnapshots(region: string, sourceRegion: () => Promise<string>, ctx: Ec2Context | Ec2Error): RegionSnapshots {
  if (ctx instanceof Ec2Error) {
    const refuse = () => Promise.reject(ctx);
    return { region, findSnapshotsByName: refuse, getSnapshot: refuse, copySnapshot: refuse, deleteSnapshot: refuse };
  }
  const findSnapshotsByName = async (name: string) => {
    if (!isWellFormedName(name)) throw malformedSnapshotName(name);
    return (await describeSnapshotsByNames(ctx, [name])).get(name) ?? [];
  };
  return {
    region,
    findSnapshotsByName,
    getSnapshot: async (snapshotId) => (await describeSnapshotsByIds(ctx, [snapshotId])).get(snapshotId),
    async copySnapshot(request) {
      const [existing] = await findSnapshotsByName(request.name);
      if (existing) return existing;
      const tags = { ...request.tags, ...snapshotIdentityTags(ctx.clusterId, request.name) };
      const out = await ctx.call('CopySnapshot', async (o) =>
        ctx.client.send(
          new CopySnapshotCommand({
            SourceRegion: await sourceRegion(),
            SourceSnapshotId: request.sourceSnapshotId,
            ...(request.kmsKeyId !== undefined && { Encrypted: true, KmsKeyId: request.kmsKeyId }),
            TagSpecifications: [{ ResourceType: 'snapshot', Tags: tagList(tags) }],
          }),
          o,
        ),
      );
      if (!out.SnapshotId) throw new Ec2Error('other', 'NoSnapshotId', `EC2 CopySnapshot into ${region} answered no SnapshotId`, 'CopySnapshot');
      // CopySnapshot answers the ID only: the copy as the look-up will see it.
      const [copy] = await findSnapshotsByName(request.name);
      return copy ?? toSnapshot({ SnapshotId: out.SnapshotId, State: 'pending', VolumeSize: 0, Tags: out.Tags?.length ? out.Tags : tagList(tags) });
    },
    async deleteSnapshot(snapshotId) {
      try {
        await ctx.call('DeleteSnapshot', (o) => ctx.client.send(new DeleteSnapshotCommand({ SnapshotId: snapshotId }), o));
      } catch (err) {
        if (!isEc2Error(err, 'notFound')) throw err;
      }
    },
  };
}
