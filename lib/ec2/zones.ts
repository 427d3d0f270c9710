import { DescribeAvailabilityZonesCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { callEc2 } from './call.js';
import type { Ec2Context } from './describe.js';
import type { Zone } from './types.js';

/**
 * How long the Region's zones are remembered. An account's mapping of zone names to IDs never
 * changes; the limit only lets a zone opted in later (a Local Zone) appear without a restart.
 */
export const ZONES_TTL_MS = 60 * 60 * 1000;

interface Entry {
  expires: number;
  zones: Promise<Zone[]>;
}

/**
 * One entry per EC2 client, that is per process and Region: the clients of `createEc2Client`
 * are shared by every gateway of a process, and a client is tied to one Region and account.
 */
const byClient = new WeakMap<EC2Client, Entry>();

/**
 * The Region's zones, from the process's cache or one DescribeAvailabilityZones that every
 * caller waiting meanwhile shares. The shared call is bounded by the client's own timeouts,
 * each caller by its request's deadline; a failed call is forgotten, so the next caller asks
 * again.
 */
export function cachedZones(ctx: Ec2Context, ttlMs: number = ZONES_TTL_MS, now: () => number = Date.now): Promise<Zone[]> {
  let entry = byClient.get(ctx.client);
  if (!entry || entry.expires <= now()) {
    const zones = describeZones(ctx);
    const fresh: Entry = { expires: now() + ttlMs, zones };
    byClient.set(ctx.client, fresh);
    zones.catch(() => {
      if (byClient.get(ctx.client) === fresh) byClient.delete(ctx.client);
    });
    entry = fresh;
  }
  const shared = entry.zones;
  return callEc2('DescribeAvailabilityZones', ctx.deadline, () => shared);
}

/** Every zone the account can use in the Region (those not opted in are left out by EC2). */
async function describeZones(ctx: Ec2Context): Promise<Zone[]> {
  const out = await ctx.call('DescribeAvailabilityZones', (o) => ctx.client.send(new DescribeAvailabilityZonesCommand({}), o), { unbounded: true });
  return (out.AvailabilityZones ?? []).flatMap((z) => (z.ZoneName && z.ZoneId ? [{ name: z.ZoneName, id: z.ZoneId }] : []));
}
