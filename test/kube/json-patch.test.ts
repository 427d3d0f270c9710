import { describe, expect, it } from 'vitest';
import { escapePointerToken, finalizerPatch } from '../../lib/kube/json-patch.js';

describe('finalizerPatch', () => {
  const meta = { uid: 'u1', resourceVersion: '7', finalizers: ['a'] };

  it('add to an existing list -> test uid and the list as read, then append', () => {
    expect(finalizerPatch(meta, 'b', 'add')).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'u1' },
      { op: 'test', path: '/metadata/finalizers', value: ['a'] },
      { op: 'add', path: '/metadata/finalizers/-', value: 'b' },
    ]);
  });

  it('add with no list -> test the resourceVersion, then create the list', () => {
    expect(finalizerPatch({ uid: 'u1', resourceVersion: '7' }, 'b', 'add')).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'u1' },
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'add', path: '/metadata/finalizers', value: ['b'] },
    ]);
  });

  it('remove -> test the list, replace it without ours (every copy); last one -> remove the field', () => {
    expect(finalizerPatch({ ...meta, finalizers: ['a', 'b', 'a'] }, 'a', 'remove')?.at(-1)).toEqual({ op: 'replace', path: '/metadata/finalizers', value: ['b'] });
    expect(finalizerPatch(meta, 'a', 'remove')?.at(-1)).toEqual({ op: 'remove', path: '/metadata/finalizers' });
  });

  it('already present (add) or absent (remove) -> nothing to do', () => {
    expect(finalizerPatch(meta, 'a', 'add')).toBeUndefined();
    expect(finalizerPatch(meta, 'b', 'remove')).toBeUndefined();
    expect(finalizerPatch({ finalizers: null }, 'b', 'remove')).toBeUndefined();
  });

  it('annotation keys -> "/" as ~1 and "~" as ~0', () => {
    expect(escapePointerToken('volume.kubernetes.io/selected-node')).toBe('volume.kubernetes.io~1selected-node');
    expect(escapePointerToken('a~b/c')).toBe('a~0b~1c');
  });
});
