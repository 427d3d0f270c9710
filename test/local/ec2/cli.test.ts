import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSim, type TestSim } from './helpers.js';

const run = promisify(execFile);
let t: TestSim;

beforeAll(async () => {
  // Time scale 1000: every transition (≤ 15 s simulated) is over before the next CLI call.
  t = await startTestSim({ timeScale: 1000 });
});
afterAll(() => t.close());

/** `aws ec2 <args>` against the simulator, isolated from any local AWS configuration. */
async function aws(...args: string[]): Promise<{ code: number; json: unknown; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_CONFIG_FILE: '/nonexistent/volhook-aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/volhook-aws-credentials',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_MAX_ATTEMPTS: '1',
  };
  const argv = ['ec2', ...args, '--endpoint-url', t.url, '--region', 'us-east-1', '--output', 'json'];
  try {
    const { stdout, stderr } = await run('aws', argv, { env, timeout: 20_000 });
    return { code: 0, json: stdout.trim() ? JSON.parse(stdout) : undefined, stderr };
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, json: undefined, stderr: e.stderr ?? String(err) };
  }
}

describe('AWS CLI v1 against the simulator', () => {
  it('create -> attach -> describe (attached) -> detach -> delete -> delete again is InvalidVolume.NotFound', async () => {
    const node = t.sim.runInstance({ zone: 'us-east-1a' });

    const created = await aws(
      'create-volume',
      '--availability-zone', 'us-east-1a',
      '--size', '5',
      '--volume-type', 'gp3',
      '--tag-specifications', 'ResourceType=volume,Tags=[{Key=owner,Value=cli}]',
    );
    expect(created.stderr).toBe('');
    const vol = created.json as { VolumeId: string; State: string; Size: number; Tags: { Key: string; Value: string }[] };
    expect(vol).toMatchObject({ State: 'creating', Size: 5, Tags: [{ Key: 'owner', Value: 'cli' }] });

    const attached = await aws('attach-volume', '--volume-id', vol.VolumeId, '--instance-id', node.id, '--device', '/dev/xvdba');
    expect(attached.json).toMatchObject({ VolumeId: vol.VolumeId, InstanceId: node.id, Device: '/dev/xvdba', State: 'attaching' });

    const described = await aws('describe-volumes', '--volume-ids', vol.VolumeId);
    expect(described.json).toMatchObject({
      Volumes: [{ VolumeId: vol.VolumeId, State: 'in-use', Attachments: [{ InstanceId: node.id, State: 'attached' }] }],
    });

    const detached = await aws('detach-volume', '--volume-id', vol.VolumeId);
    expect(detached.json).toMatchObject({ VolumeId: vol.VolumeId, State: 'detaching' });

    const deleted = await aws('delete-volume', '--volume-id', vol.VolumeId);
    expect(deleted.code).toBe(0);

    const again = await aws('delete-volume', '--volume-id', vol.VolumeId);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('InvalidVolume.NotFound');
  });

  it('create-snapshot -> describe-snapshots by tag (completed) -> create-volume from it -> copy-volumes -> delete-snapshot', async () => {
    const created = await aws('create-volume', '--availability-zone', 'us-east-1b', '--size', '6', '--volume-type', 'gp3');
    const vol = created.json as { VolumeId: string };

    const snap = await aws(
      'create-snapshot',
      '--volume-id', vol.VolumeId,
      '--tag-specifications', 'ResourceType=snapshot,Tags=[{Key=CSIVolumeSnapshotName,Value=snapcontent-cli}]',
    );
    expect(snap.stderr).toBe('');
    const s = snap.json as { SnapshotId: string; State: string; VolumeSize: number };
    expect(s).toMatchObject({ State: 'pending', VolumeSize: 6 });

    const listed = await aws('describe-snapshots', '--owner-ids', 'self', '--filters', 'Name=tag:CSIVolumeSnapshotName,Values=snapcontent-cli');
    expect(listed.json).toMatchObject({ Snapshots: [{ SnapshotId: s.SnapshotId, State: 'completed', Progress: '100%' }] });

    const restored = await aws('create-volume', '--availability-zone', 'us-east-1b', '--snapshot-id', s.SnapshotId);
    expect(restored.json).toMatchObject({ SnapshotId: s.SnapshotId, Size: 6 });

    const copied = await aws('copy-volumes', '--source-volume-id', vol.VolumeId, '--volume-type', 'gp3');
    expect(copied.json).toMatchObject({ Volumes: [{ SourceVolumeId: vol.VolumeId, AvailabilityZone: 'us-east-1b', Size: 6, VolumeType: 'gp3' }] });

    expect((await aws('delete-snapshot', '--snapshot-id', s.SnapshotId)).code).toBe(0);
    const again = await aws('delete-snapshot', '--snapshot-id', s.SnapshotId);
    expect(again.stderr).toContain('InvalidSnapshot.NotFound');
  });
});
