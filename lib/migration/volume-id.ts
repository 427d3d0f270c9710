/**
 * In-tree EBS volume IDs, as csi-translation-lib reads them (`KubernetesVolumeIDToEBSVolumeID`,
 * plugins/aws_ebs.go): the in-tree plugin wrote `aws://<zone>/vol-…`, older tooling
 * `aws:///vol-…`, and migrated provisioning writes the bare `vol-…`.
 */
import { TranslationError } from './errors.js';

const AWS_URL_PREFIX = 'aws://';
const EBS_VOLUME_ID = /^vol-[^/]*$/;

/**
 * The EBS volume ID in an in-tree `volumeID`. The zone in the URL's host is ignored (the PV's
 * node affinity carries it). An ID without the `aws://` prefix is returned as it is,
 * unchecked, as upstream does; EC2 is the judge of it.
 *
 * @example kubernetesVolumeIdToEbsVolumeId('aws://us-east-1a/vol-02399794d890f9375') === 'vol-02399794d890f9375'
 * @example kubernetesVolumeIdToEbsVolumeId('aws:///vol-02399794d890f9375') === 'vol-02399794d890f9375'
 * @throws TranslationError for an `aws://` ID whose path is not `vol-…`
 */
export function kubernetesVolumeIdToEbsVolumeId(kubernetesId: string): string {
  if (!kubernetesId.startsWith(AWS_URL_PREFIX)) return kubernetesId;
  let path: string;
  try {
    // Go's url.Parse gives the decoded path; WHATWG URL keeps it percent-encoded.
    path = decodeURIComponent(new URL(kubernetesId).pathname);
  } catch (error) {
    throw new TranslationError(`Invalid disk name (${kubernetesId}): ${(error as Error).message}`);
  }
  const awsId = path.replace(/^\/+|\/+$/g, '');
  if (!EBS_VOLUME_ID.test(awsId)) throw new TranslationError(`Invalid format for AWS volume (${kubernetesId})`);
  return awsId;
}
