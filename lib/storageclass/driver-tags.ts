import { int32Parameter, isTrue, type ClassParameters } from './parameters.js';

/**
 * Tags the driver derives from parameters and writes at create (pkg/cloud/cloud.go), which
 * its resize path reads back: with `AllowAutoIOPSIncreaseOnModify` true and `IOPSPerGb` above
 * 0, a resize sets IOPS to the new size × IOPSPerGb (capped). They sit under the reserved
 * `ebs.csi.aws.com/` prefix, so no tagSpecification can set them; volhook writes them as the
 * driver does, so a volume resized later — by volhook or by the driver after switching back —
 * keeps its IOPS per GiB.
 */
export const DRIVER_TAG_KEYS = {
  iopsPerGB: 'ebs.csi.aws.com/IOPSPerGb',
  allowAutoIOPSIncreaseOnModify: 'ebs.csi.aws.com/AllowAutoIOPSIncreaseOnModify',
} as const;

/**
 * The driver's parameter tags for a class: `IOPSPerGb` whenever `iopsPerGB` is given (its
 * value as an integer, even 0 or less, as the driver writes it), and
 * `AllowAutoIOPSIncreaseOnModify` ("true" or "false") whenever that key is given.
 *
 * @throws ParameterError when iopsPerGB is not an int32.
 */
export function driverTagsFor(params: ClassParameters): Record<string, string> {
  const tags: Record<string, string> = {};
  const iopsPerGB = int32Parameter(params.get('iopsPerGB'));
  if (iopsPerGB !== undefined) tags[DRIVER_TAG_KEYS.iopsPerGB] = String(iopsPerGB);
  const onModify = params.get('allowAutoIOPSIncreaseOnModify');
  if (onModify) tags[DRIVER_TAG_KEYS.allowAutoIOPSIncreaseOnModify] = String(isTrue(onModify));
  return tags;
}
