/**
 * Device names for attaching EBS volumes, in the order the EBS CSI driver hands them out:
 * `/dev/xvdaa`…`/dev/xvdbz`, then `/dev/xvdda`…`/dev/xvddx`, then `/dev/xvdb`…`/dev/xvdz`.
 * Two-letter names first keeps clear of the single-letter names AMIs use for root and
 * instance-store devices.
 */
export const DEVICE_NAMES: readonly string[] = (() => {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const names: string[] = [];
  for (const first of 'ab') for (const second of letters) names.push(`/dev/xvd${first}${second}`);
  for (const second of letters.slice(0, letters.indexOf('x') + 1)) names.push(`/dev/xvdd${second}`);
  for (const letter of letters.slice(1)) names.push(`/dev/xvd${letter}`);
  return names;
})();

/** The first name of {@link DEVICE_NAMES} not in `taken`; undefined when all are taken. */
export function firstFreeDevice(taken: Iterable<string>): string | undefined {
  const used = new Set(taken);
  return DEVICE_NAMES.find((name) => !used.has(name));
}

/**
 * A free name of {@link DEVICE_NAMES} for `volumeId`: the free names in list order, one picked
 * by a stable hash of the volume ID. Two requests attaching different volumes to one instance
 * at once (two backends, or two requests of one) each see the same free names, and with the
 * first-free rule both would ask EC2 for the same one; spread by the volume, they seldom
 * collide, and a retry of the same volume asks for the same name again.
 */
export function deviceFor(volumeId: string, taken: Iterable<string>): string | undefined {
  const used = new Set(taken);
  const free = DEVICE_NAMES.filter((name) => !used.has(name));
  if (free.length === 0) return undefined;
  return free[hashIndex(volumeId, free.length)];
}

/** FNV-1a of `key`, modulo `size`: stable across processes and versions. */
function hashIndex(key: string, size: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % size;
}

/**
 * Hands out device names per instance for the attaches of one request. A name, once claimed,
 * stays claimed for the request — whether EC2 accepted it or refused it as in use — so a
 * second attach to the same instance, or a retry after `deviceInUse`, gets another name.
 * Claiming is synchronous, so attaches running concurrently can never claim the same name.
 */
export class DeviceAllocator {
  readonly #claimed = new Map<string, Set<string>>();

  /** A name free on `instanceId` for `volumeId` (see {@link deviceFor}), now claimed; undefined when none is left. */
  claim(instanceId: string, devicesInUse: readonly string[], volumeId: string): string | undefined {
    let claimed = this.#claimed.get(instanceId);
    if (!claimed) this.#claimed.set(instanceId, (claimed = new Set()));
    const device = deviceFor(volumeId, [...devicesInUse, ...claimed]);
    if (device !== undefined) claimed.add(device);
    return device;
  }
}
