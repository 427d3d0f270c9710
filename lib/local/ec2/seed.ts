/**
 * Volumes put straight into the simulated account, for tests and benchmarks that need disks
 * volhook did not make: leftovers of a crashed provisioner, created hours ago, tagged for a
 * cluster. EC2 has no such call; the simulator offers it in-process and as `POST
 * /_sim/volumes`, which exists only on the simulator's own server.
 */
import * as z from 'zod';
import { ec2Errors } from './errors.js';
import { VOLUME_TYPES, type Volume } from './model.js';
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
