import { describe, expect, it } from 'vitest';
import { expectParameterError, spec } from './helpers.js';

describe('access modes', () => {
  it.each([
    { name: 'ReadWriteOnce on gp3 -> single attach', type: 'gp3', volumeMode: 'Filesystem', accessModes: ['ReadWriteOnce'], multiAttach: false },
    { name: 'ReadWriteOncePod on gp3 -> single attach', type: 'gp3', volumeMode: 'Filesystem', accessModes: ['ReadWriteOncePod'], multiAttach: false },
    { name: 'ReadWriteOnce on io2 Block -> single attach', type: 'io2', volumeMode: 'Block', accessModes: ['ReadWriteOnce'], multiAttach: false },
    { name: 'ReadWriteOnce on st1 -> single attach', type: 'st1', volumeMode: 'Filesystem', accessModes: ['ReadWriteOnce'], multiAttach: false, size: '125Gi' },
    { name: 'ReadWriteMany on io2 Block -> multi-attach', type: 'io2', volumeMode: 'Block', accessModes: ['ReadWriteMany'], multiAttach: true },
    { name: 'ReadWriteOnce + ReadWriteMany on io2 Block -> multi-attach', type: 'io2', volumeMode: 'Block', accessModes: ['ReadWriteOnce', 'ReadWriteMany'], multiAttach: true },
  ] as const)('$name', ({ type, volumeMode, accessModes, multiAttach, ...rest }) => {
    const size = 'size' in rest ? rest.size : '10Gi';
    expect(spec({ type }, { volumeMode, accessModes: [...accessModes], requestStorage: size }).multiAttach).toBe(multiAttach);
  });

  it.each([
    { name: 'ReadWriteMany on gp3 Block -> error', type: 'gp3', volumeMode: 'Block', accessModes: ['ReadWriteMany'], problem: /needs type io2 and volumeMode Block.*type gp3/ },
    { name: 'ReadWriteMany on gp3 Filesystem -> error', type: 'gp3', volumeMode: 'Filesystem', accessModes: ['ReadWriteMany'], problem: /needs type io2/ },
    { name: 'ReadWriteMany on io1 Block -> error', type: 'io1', volumeMode: 'Block', accessModes: ['ReadWriteMany'], problem: /type io1/ },
    { name: 'ReadWriteMany on io2 Filesystem -> error', type: 'io2', volumeMode: 'Filesystem', accessModes: ['ReadWriteMany'], problem: /volumeMode Filesystem/ },
    { name: 'ReadOnlyMany -> error', type: 'gp3', volumeMode: 'Filesystem', accessModes: ['ReadOnlyMany'], problem: /ReadOnlyMany is not supported/ },
    { name: 'ReadOnlyMany next to ReadWriteOnce -> error', type: 'io2', volumeMode: 'Block', accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], problem: /ReadOnlyMany/ },
    { name: 'unknown mode -> error', type: 'gp3', volumeMode: 'Filesystem', accessModes: ['ReadWriteSometimes'], problem: /"ReadWriteSometimes" is not an access mode/ },
    { name: 'no mode at all -> error', type: 'gp3', volumeMode: 'Filesystem', accessModes: [], problem: /names no access mode/ },
  ] as const)('$name', ({ type, volumeMode, accessModes, problem }) => {
    expectParameterError(() => spec({ type }, { volumeMode, accessModes: [...accessModes] }), 'accessModes', problem);
  });
});
