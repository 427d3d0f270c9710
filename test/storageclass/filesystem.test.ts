import { describe, expect, it } from 'vitest';
import { expectParameterError, spec } from './helpers.js';

const block = { volumeMode: 'Block' as const };

describe('fstype', () => {
  it.each([
    { name: 'no fstype -> ext4', parameters: {}, fsType: 'ext4' },
    { name: 'csi.storage.k8s.io/fstype xfs -> xfs', parameters: { 'csi.storage.k8s.io/fstype': 'xfs' }, fsType: 'xfs' },
    { name: 'legacy fstype ext3 -> ext3', parameters: { fstype: 'ext3' }, fsType: 'ext3' },
    { name: 'fstype ntfs (Windows nodes) -> ntfs', parameters: { 'csi.storage.k8s.io/fstype': 'ntfs' }, fsType: 'ntfs' },
    { name: 'legacy fstype key in capitals -> matched (the provisioner lowercases it)', parameters: { FSTYPE: 'xfs' }, fsType: 'xfs' },
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
    { name: 'Block with csi.storage.k8s.io/fstype -> ignored, as the external-provisioner ignores it', parameters: { 'csi.storage.k8s.io/fstype': 'xfs' } },
    { name: 'Block with legacy fstype -> ignored', parameters: { fstype: 'ext4' } },
    { name: 'Block with an fstype no node mounts -> ignored (nothing is formatted)', parameters: { 'csi.storage.k8s.io/fstype': 'btrfs' } },
  ])('$name', ({ parameters }) => {
    expect(spec(parameters, block)).not.toHaveProperty('fsType');
  });

  it.each([
    { name: 'both fstype keys -> error naming the legacy key', parameters: { 'csi.storage.k8s.io/fstype': 'ext4', fstype: 'ext4' }, key: 'fstype', problem: /cannot be combined/ },
    { name: 'both fstype keys with the legacy one empty -> error (the provisioner\'s answer depends on map order)', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', fstype: '' }, key: 'fstype', problem: /cannot be combined/ },
    { name: 'fstype btrfs -> error', parameters: { 'csi.storage.k8s.io/fstype': 'btrfs' }, key: 'csi.storage.k8s.io/fstype', problem: /"btrfs" is not a filesystem the EBS CSI node plugin mounts/ },
    { name: 'fstype ext2 (the node plugin refuses it) -> error', parameters: { 'csi.storage.k8s.io/fstype': 'ext2' }, key: 'csi.storage.k8s.io/fstype', problem: /"ext2" is not a filesystem the EBS CSI node plugin mounts/ },
    { name: 'legacy fstype ext2 -> error', parameters: { fstype: 'ext2' }, key: 'fstype', problem: /not a filesystem the EBS CSI node plugin mounts/ },
    { name: 'fstype XFS (mkfs.XFS does not exist) -> error', parameters: { 'csi.storage.k8s.io/fstype': 'XFS' }, key: 'csi.storage.k8s.io/fstype', problem: /in lower case/ },
  ])('$name', ({ parameters, key, problem }) => {
    expectParameterError(() => spec(parameters), key, problem);
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
    { name: 'ext4EncryptionSupport "true" -> ext4encryptionsupport', parameters: { ext4EncryptionSupport: 'true' }, attributes: { ext4encryptionsupport: 'true' } },
    { name: 'ext4EncryptionSupport "True" -> false, no attribute', parameters: { ext4EncryptionSupport: 'True' }, attributes: {} },
    { name: 'xfs with ext4EncryptionSupport "false" -> not set, allowed', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', ext4EncryptionSupport: 'false' }, attributes: {} },
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
    { name: 'ext4BigAlloc + ext4ClusterSize with ext3 -> error on ext4BigAlloc (the driver\'s order)', parameters: { fstype: 'ext3', ext4BigAlloc: 'true', ext4ClusterSize: '16k' }, key: 'ext4BigAlloc', problem: /fstype ext3/ },
    { name: 'ext4EncryptionSupport with ext3 -> error', parameters: { fstype: 'ext3', ext4EncryptionSupport: 'true' }, key: 'ext4EncryptionSupport', problem: /cannot be used with fstype ext3/ },
    { name: 'ext4EncryptionSupport with xfs -> error', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', ext4EncryptionSupport: 'true' }, key: 'ext4EncryptionSupport', problem: /cannot be used with fstype xfs/ },
    { name: 'blockSize with ntfs -> error', parameters: { 'csi.storage.k8s.io/fstype': 'ntfs', blockSize: '4096' }, key: 'blockSize', problem: /cannot be used with fstype ntfs/ },
    { name: 'inodeSize with ntfs -> error', parameters: { 'csi.storage.k8s.io/fstype': 'ntfs', inodeSize: '512' }, key: 'inodeSize', problem: /cannot be used with fstype ntfs/ },
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
    { key: 'ext4EncryptionSupport', value: 'true' },
  ])('$key on a Block volume -> error naming $key', ({ key, value }) => {
    expectParameterError(() => spec({ [key]: value }, block), key, /cannot be used with volumeMode Block/);
  });
});
