/**
 * Volumes put straight into the simulated account, for tests and benchmarks that need disks
 * volhook did not make: leftovers of a crashed provisioner, created hours ago, tagged for a
 * cluster. EC2 has no such call; the simulator offers it in-process and as `POST
 * /_sim/volumes`, which exists only on the simulator's own server.
 */
import * as z from 'zod';
import { ec2Errors } from './errors.js';
import { VOLUME_TYPES, type Snapshot, type Volume } from './model.js';
import type { World } from './world.js';

export const SeedVolumeSchema = z.object({
  zone: z.string().min(1),
  sizeGiB: z.number().int().positive().default(4),
  type: z.enum(VOLUME_TYPES).default('gp3'),
  tags: z.record(z.string(), z.string()).default({}),
  /** When EC2 says the volume was made (ISO 8601); default now. */
  createdAt: z.iso.datetime().optional(),
  /** How many identical volumes (each with its own ID); default 1. */
  count: z.number().int().positive().max(100_000).default(1),
});
export type SeedVolumeRequest = z.input<typeof SeedVolumeSchema>;

/** Adds `available` volumes as described; answers them. */
export function seedVolumes(world: World, input: SeedVolumeRequest): Volume[] {
  const req = SeedVolumeSchema.parse(input);
  if (!world.zone(req.zone)) throw ec2Errors.invalidValue(`Invalid availability zone: [${req.zone}]`);
  const createTime = req.createdAt ? Date.parse(req.createdAt) : world.now();
  const tags = Object.entries(req.tags).map(([key, value]) => ({ key, value }));
  const seeded: Volume[] = [];
  for (let n = 0; n < req.count; n++) {
    const volume: Volume = {
      id: world.newId('vol'),
      seq: world.nextSeq(),
      zone: req.zone,
      size: req.sizeGiB,
      type: req.type,
      ...(req.type === 'gp3' ? { iops: 3000, throughput: 125 } : {}),
      encrypted: false,
      multiAttach: false,
      state: 'available',
      createTime,
      tags: tags.map((t) => ({ ...t })),
      attachments: [],
    };
    world.volumes.set(volume.id, volume);
    seeded.push(structuredClone(volume));
  }
  world.changed();
  return seeded;
}

export const SeedSnapshotSchema = z.object({
  /** The volume it is of (need not exist any more, as in EC2). */
  volumeId: z.string().regex(/^vol-[0-9a-f]+$/),
  sizeGiB: z.number().int().positive().default(4),
  tags: z.record(z.string(), z.string()).default({}),
  /** When EC2 says the snapshot was started (ISO 8601); default now. */
  startedAt: z.iso.datetime().optional(),
  count: z.number().int().positive().max(100_000).default(1),
});
export type SeedSnapshotRequest = z.input<typeof SeedSnapshotSchema>;

/** Adds `completed` snapshots as described (snapshots volhook did not make, or made and forgot); answers them. */
export function seedSnapshots(world: World, input: SeedSnapshotRequest): Snapshot[] {
  const req = SeedSnapshotSchema.parse(input);
  const startTime = req.startedAt ? Date.parse(req.startedAt) : world.now();
  const seeded: Snapshot[] = [];
  for (let n = 0; n < req.count; n++) {
    const snapshot: Snapshot = {
      id: world.newId('snap'),
      seq: world.nextSeq(),
      volumeId: req.volumeId,
      volumeSize: req.sizeGiB,
      state: 'completed',
      startTime,
      dueTime: startTime,
      completionTime: startTime,
      description: '',
      encrypted: false,
      tags: Object.entries(req.tags).map(([key, value]) => ({ key, value })),
    };
    world.snapshots.set(snapshot.id, snapshot);
    seeded.push(structuredClone(snapshot));
  }
  world.changed();
  return seeded;
}
