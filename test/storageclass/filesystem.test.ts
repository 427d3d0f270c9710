import { describe, expect, it } from 'vitest';
import { expectParameterError, spec } from './helpers.js';

const block = { volumeMode: 'Block' as const };

describe('fstype', () => {
  it.each([
    { name: 'no fstype -> ext4', parameters: {}, fsType: 'ext4' },
    { name: 'csi.storage.k8s.io/fstype xfs -> xfs', parameters: { 'csi.storage.k8s.io/fstype': 'xfs' }, fsType: 'xfs' },
    { name: 'legacy fstype ext3 -> ext3', parameters: { fstype: 'ext3' }, fsType: 'ext3' },
    { name: 'fstype ext2 -> ext2', parameters: { 'csi.storage.k8s.io/fstype': 'ext2' }, fsType: 'ext2' },
    { name: 'fstype key in other case -> matched', parameters: { 'CSI.Storage.K8s.io/FSType': 'xfs' }, fsType: 'xfs' },
    { name: 'empty fstype -> default ext4 (as the external-provisioner)', parameters: { 'csi.storage.k8s.io/fstype': '' }, fsType: 'ext4' },
  ])('$name', ({ parameters, fsType }) => {
    expect(spec(parameters).fsType).toBe(fsType);
  });

  it('Block without fstype -> fsType undefined', () => {
    expect(spec({}, block)).not.toHaveProperty('fsType');
  });

  it('Block with an empty fstype -> treated as unset, fsType undefined', () => {
    expect(spec({ fstype: '' }, block)).not.toHaveProperty('fsType');
  });

  it.each([
    { name: 'both fstype keys -> error naming the legacy key', parameters: { 'csi.storage.k8s.io/fstype': 'ext4', fstype: 'ext4' }, key: 'fstype', problem: /cannot be combined/ },
    { name: 'fstype btrfs -> error', parameters: { 'csi.storage.k8s.io/fstype': 'btrfs' }, key: 'csi.storage.k8s.io/fstype', problem: /"btrfs" is not a supported filesystem/ },
    { name: 'fstype ntfs -> error', parameters: { fstype: 'ntfs' }, key: 'fstype', problem: /not a supported filesystem/ },
    { name: 'fstype XFS (values are case-sensitive) -> error', parameters: { 'csi.storage.k8s.io/fstype': 'XFS' }, key: 'csi.storage.k8s.io/fstype', problem: /not a supported filesystem/ },
  ])('$name', ({ parameters, key, problem }) => {
    expectParameterError(() => spec(parameters), key, problem);
  });

  it.each([
    { name: 'Block with csi.storage.k8s.io/fstype -> error naming it', key: 'csi.storage.k8s.io/fstype' },
    { name: 'Block with legacy fstype -> error naming it', key: 'fstype' },
  ])('$name', ({ key }) => {
    expectParameterError(() => spec({ [key]: 'ext4' }, block), key, /cannot be used with volumeMode Block/);
  });
});

describe('formatting options -> volumeAttributes', () => {
  it.each([
    { name: 'blockSize -> blocksize', parameters: { blockSize: '4096' }, attributes: { blocksize: '4096' } },
    { name: 'inodeSize -> inodesize', parameters: { inodeSize: '512' }, attributes: { inodesize: '512' } },
    { name: 'bytesPerInode -> bytesperinode', parameters: { bytesPerInode: '16384' }, attributes: { bytesperinode: '16384' } },
    { name: 'numberOfInodes -> numberofinodes', parameters: { numberOfInodes: '200000' }, attributes: { numberofinodes: '200000' } },
    { name: 'ext4BigAlloc "true" -> ext4bigalloc', parameters: { ext4BigAlloc: 'true' }, attributes: { ext4bigalloc: 'true' } },
    { name: 'ext4BigAlloc with ext4ClusterSize -> both', parameters: { ext4BigAlloc: 'true', ext4ClusterSize: '16k' }, attributes: { ext4bigalloc: 'true', ext4clustersize: '16k' } },
    { name: 'ext4BigAlloc "True" -> false, no attribute', parameters: { ext4BigAlloc: 'True' }, attributes: {} },
    { name: 'ext4BigAlloc "false" -> no attribute', parameters: { ext4BigAlloc: 'false' }, attributes: {} },
    { name: 'empty blockSize -> unset, no attribute', parameters: { blockSize: '' }, attributes: {} },
    { name: 'xfs with blockSize and inodeSize -> allowed', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', blockSize: '4096', inodeSize: '512' }, attributes: { blocksize: '4096', inodesize: '512' } },
    { name: 'xfs with ext4BigAlloc "false" -> not set, allowed', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', ext4BigAlloc: 'false' }, attributes: {} },
    { name: 'ext3 with bytesPerInode -> allowed', parameters: { fstype: 'ext3', bytesPerInode: '4096' }, attributes: { bytesperinode: '4096' } },
    { name: 'keys in other case -> matched, attribute keys lower case', parameters: { BLOCKSIZE: '1024' }, attributes: { blocksize: '1024' } },
    { name: 'no options -> empty attributes', parameters: {}, attributes: {} },
  ])('$name', ({ parameters, attributes }) => {
    expect(spec(parameters).volumeAttributes).toStrictEqual(attributes);
  });

  it.each([
    { name: 'bytesPerInode with xfs -> error', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', bytesPerInode: '4096' }, key: 'bytesPerInode', problem: /cannot be used with fstype xfs/ },
    { name: 'numberOfInodes with xfs -> error', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', numberOfInodes: '1000' }, key: 'numberOfInodes', problem: /cannot be used with fstype xfs/ },
    { name: 'ext4BigAlloc with xfs -> error', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', ext4BigAlloc: 'true' }, key: 'ext4BigAlloc', problem: /cannot be used with fstype xfs/ },
    { name: 'ext4ClusterSize with xfs -> error', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', ext4ClusterSize: '16k' }, key: 'ext4ClusterSize', problem: /cannot be used with fstype xfs/ },
    { name: 'ext4BigAlloc with ext3 -> error', parameters: { fstype: 'ext3', ext4BigAlloc: 'true' }, key: 'ext4BigAlloc', problem: /cannot be used with fstype ext3/ },
    { name: 'ext4BigAlloc + ext4ClusterSize with ext2 -> error on ext4BigAlloc', parameters: { fstype: 'ext2', ext4BigAlloc: 'true', ext4ClusterSize: '16k' }, key: 'ext4BigAlloc', problem: /fstype ext2/ },
    { name: 'ext4ClusterSize without ext4BigAlloc -> error', parameters: { ext4ClusterSize: '16k' }, key: 'ext4ClusterSize', problem: /needs ext4BigAlloc: "true"/ },
    { name: 'ext4ClusterSize with ext4BigAlloc "false" -> error', parameters: { ext4BigAlloc: 'false', ext4ClusterSize: '16k' }, key: 'ext4ClusterSize', problem: /needs ext4BigAlloc/ },
    { name: 'blockSize with a space -> error', parameters: { blockSize: '4 096' }, key: 'blockSize', problem: /letters and digits only/ },
    { name: 'blockSize with shell characters -> error', parameters: { blockSize: '4096;reboot' }, key: 'blockSize', problem: /letters and digits only/ },
    { name: 'inodeSize negative -> error', parameters: { inodeSize: '-256' }, key: 'inodeSize', problem: /letters and digits only/ },
    { name: 'bytesPerInode with a dot -> error', parameters: { bytesPerInode: '1.5k' }, key: 'bytesPerInode', problem: /letters and digits only/ },
    { name: 'numberOfInodes with a dash -> error', parameters: { numberOfInodes: '1-000' }, key: 'numberOfInodes', problem: /letters and digits only/ },
    { name: 'ext4ClusterSize non-alphanumeric -> error', parameters: { ext4BigAlloc: 'true', ext4ClusterSize: '16_k' }, key: 'ext4ClusterSize', problem: /letters and digits only/ },
  ])('$name', ({ parameters, key, problem }) => {
    expectParameterError(() => spec(parameters), key, problem);
  });

  it.each([
    { key: 'blockSize', value: '4096' },
    { key: 'inodeSize', value: '512' },
    { key: 'bytesPerInode', value: '4096' },
    { key: 'numberOfInodes', value: '1000' },
    { key: 'ext4BigAlloc', value: 'true' },
    { key: 'ext4ClusterSize', value: '16k' },
  ])('$key on a Block volume -> error naming $key', ({ key, value }) => {
    expectParameterError(() => spec({ [key]: value }, block), key, /cannot be used with volumeMode Block/);
  });
});
