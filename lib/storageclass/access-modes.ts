import { ParameterError } from './errors.js';
import type { VolumeType } from './volume-types.js';

/** Single-node modes every EBS volume supports: one instance attaches it. */
const SINGLE_NODE_MODES = new Set(['ReadWriteOnce', 'ReadWriteOncePod']);

/**
 * Checks a claim's access modes against what EBS can do and says whether the volume must be
 * created with multi-attach.
 *
 * ReadWriteOnce and ReadWriteOncePod always work. ReadWriteMany means several nodes writing
 * one volume at once: EBS does that only as io2 multi-attach, and only for raw Block devices,
 * since no ordinary filesystem survives two writers (the reference driver accepts multi-node
 * writer only with Block). ReadOnlyMany is refused: EBS has no read-only multi-node attach,
 * and the driver refuses it too.
 *
 * @returns true when the volume must be created with MultiAttachEnabled.
 * @throws ParameterError('accessModes', …)
 */
export function multiAttachFor(type: VolumeType, volumeMode: 'Filesystem' | 'Block', accessModes: readonly string[]): boolean {
  if (accessModes.length === 0) throw new ParameterError('accessModes', 'the claim names no access mode');
  let multiAttach = false;
  for (const mode of accessModes) {
    if (SINGLE_NODE_MODES.has(mode)) continue;
    if (mode === 'ReadWriteMany') {
      if (type !== 'io2' || volumeMode !== 'Block') {
        throw new ParameterError(
          'accessModes',
          `ReadWriteMany needs type io2 and volumeMode Block (EBS multi-attach), not type ${type} with volumeMode ${volumeMode}`,
        );
      }
      multiAttach = true;
      continue;
    }
    if (mode === 'ReadOnlyMany') {
      throw new ParameterError('accessModes', 'ReadOnlyMany is not supported by EBS; use ReadWriteOnce, ReadWriteOncePod, or ReadWriteMany with io2 Block');
    }
    throw new ParameterError('accessModes', `"${mode}" is not an access mode`);
  }
  return multiAttach;
}
