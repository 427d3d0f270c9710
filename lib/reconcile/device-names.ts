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
 * Hands out device names per instance for the attaches of one request. A name, once claimed,
 * stays claimed for the request — whether EC2 accepted it or refused it as in use — so a
 * second attach to the same instance, or a retry after `deviceInUse`, gets the next name.
 * Claiming is synchronous, so attaches running concurrently can never claim the same name.
 */
export class DeviceAllocator {
  readonly #claimed = new Map<string, Set<string>>();

  /** The first name free on `instanceId`, now claimed; undefined when none is left. */
  claim(instanceId: string, devicesInUse: readonly string[]): string | undefined {
    let claimed = this.#claimed.get(instanceId);
    if (!claimed) this.#claimed.set(instanceId, (claimed = new Set()));
    const device = firstFreeDevice([...devicesInUse, ...claimed]);
    if (device !== undefined) claimed.add(device);
    return device;
  }
}
