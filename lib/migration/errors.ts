/**
 * An in-tree object that cannot be translated to its CSI form (or back): a StorageClass with
 * both `zone(s)` and `allowedTopologies`, a volume ID that is not `vol-…`, a zone whose region
 * cannot be told. The message is csi-translation-lib's where it has one, so that an Event
 * reads as it would under external-provisioner.
 */
export class TranslationError extends Error {
  override readonly name = 'TranslationError';
}
