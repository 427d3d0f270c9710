import { ec2Errors } from './errors.js';

/**
 * Linux device names EC2 accepts for EBS: `/dev/sd[a-z]` (optionally a partition 1–15),
 * `/dev/xvd[a-z]` and `/dev/xvd[a-z][a-z]`, `/dev/hd[a-z]`; `/dev/` may be left out.
 */
const VALID_DEVICE = /^(\/dev\/)?(sd[a-z]([1-9]|1[0-5])?|xvd[a-z]{1,2}|hd[a-z])$/;

export function checkDeviceName(device: string): void {
  if (!VALID_DEVICE.test(device)) {
    throw ec2Errors.invalidValue(
      `Value (${device}) for parameter device is invalid. ${device} is not a valid EBS device name.`,
    );
  }
}

/** `xvdf` and `/dev/xvdf` name the same attachment point. */
export function normalizeDevice(device: string): string {
  return device.startsWith('/dev/') ? device : `/dev/${device}`;
}
