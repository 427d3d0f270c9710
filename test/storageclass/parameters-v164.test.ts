/**
 * Every StorageClass key of aws-ebs-csi-driver v1.64.0 (its docs/parameters.md, plus the keys
 * its CreateVolume switch accepts without documenting them, plus what the external-provisioner
 * v6.3.0 reads or strips), with what volhook does with it: the CreateVolume field, the PV
 * field, the tag — or the refusal and why.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PARAMETER_KEYS, type VolumeSpec } from '../../lib/storageclass/index.js';
import { expectParameterError, spec, type TableParameters } from './helpers.js';

/** The keys of the driver's docs/parameters.md table at v1.64.0. */
const DOCUMENTED_KEYS = [
  'csi.storage.k8s.io/fstype',
  'type',
  'iopsPerGB',
  'allowAutoIOPSPerGBIncrease',
  'allowAutoIOPSIncreaseOnModify',
  'iops',
  'throughput',
  'encrypted',
  'kmsKeyId',
  'blockSize',
  'inodeSize',
  'bytesPerInode',
  'numberOfInodes',
  'ext4BigAlloc',
  'ext4ClusterSize',
  'ext4EncryptionSupport',
  'volumeInitializationRate',
];

/** Keys the driver's CreateVolume (pkg/driver/controller.go) accepts that the doc leaves out. */
const UNDOCUMENTED_KEYS = ['blockExpress', 'blockAttachUntilInitialized', 'fstype'];

/** Keys with meaning elsewhere in the stack: tagging.md's prefix, the provisioner's, and outpostArn. */
const OTHER_KEYS = ['tagSpecification*', 'csi.storage.k8s.io/*-secret-*', 'csi.storage.k8s.io/pvc/name', 'outpostArn'];

/** What a class's keys become: the CreateVolume fields, the PV's csi fields, and the tags. */
interface Effect {
  createVolume?: Partial<Record<'VolumeType' | 'Size' | 'Iops' | 'Throughput' | 'Encrypted' | 'KmsKeyId' | 'MultiAttachEnabled', unknown>>;
  /** CreateVolume TagSpecifications beyond volhook's identity tags. */
  tags?: Record<string, string>;
  pv?: { fsType?: string | undefined; volumeAttributes?: Record<string, string> };
}

interface Row {
  key: string;
  name: string;
  parameters: TableParameters;
  claim?: { requestStorage?: string; volumeMode?: 'Filesystem' | 'Block' };
  effect?: Effect;
  /** The key the refusal names and what it says. */
  refused?: { key: string; problem: RegExp };
}

/** The CreateVolume fields a spec sends (the gateway maps them one to one). */
function createVolumeOf(result: VolumeSpec) {
  return {
    VolumeType: result.type,
    Size: result.sizeGiB,
    Iops: result.iops,
    Throughput: result.throughput,
    Encrypted: result.encrypted,
    KmsKeyId: result.kmsKeyId,
    MultiAttachEnabled: result.multiAttach,
  };
}

const rows: Row[] = [
  // type
  { key: 'type', name: 'io2 -> VolumeType io2', parameters: { type: 'io2', iops: '1000' }, effect: { createVolume: { VolumeType: 'io2', Iops: 1000 } } },
  { key: 'type', name: 'absent -> VolumeType gp3', parameters: {}, effect: { createVolume: { VolumeType: 'gp3' } } },
  { key: 'type', name: 'empty -> VolumeType gp3', parameters: { type: '' }, effect: { createVolume: { VolumeType: 'gp3' } } },
  { key: 'type', name: 'not a type -> refused (EC2 would refuse it)', parameters: { type: 'gp9' }, refused: { key: 'type', problem: /not an EBS volume type/ } },

  // iops
  { key: 'iops', name: '4000 -> Iops 4000', parameters: { iops: '4000' }, effect: { createVolume: { Iops: 4000 } } },
  { key: 'iops', name: 'above 500/GiB on gp3 10 GiB -> Iops capped to 5000', parameters: { iops: '16000' }, effect: { createVolume: { Iops: 5000 } } },
  { key: 'iops', name: '0 -> not set', parameters: { iops: '0' }, effect: { createVolume: { Iops: undefined } } },
  { key: 'iops', name: 'empty -> refused (ParseInt error)', parameters: { iops: '' }, refused: { key: 'iops', problem: /not a whole number/ } },
  { key: 'iops', name: 'on gp2 -> refused (EC2 would refuse it)', parameters: { type: 'gp2', iops: '3000' }, refused: { key: 'iops', problem: /gp2 has no IOPS setting/ } },

  // iopsPerGB
  { key: 'iopsPerGB', name: '50 on io2 20 GiB -> Iops 1000, tag IOPSPerGb', parameters: { type: 'io2', iopsPerGB: '50' }, claim: { requestStorage: '20Gi' }, effect: { createVolume: { Iops: 1000 }, tags: { 'ebs.csi.aws.com/IOPSPerGb': '50' } } },
  { key: 'iopsPerGB', name: '0 -> no Iops, tag IOPSPerGb "0" (as the driver writes it)', parameters: { type: 'io2', iopsPerGB: '0' }, effect: { createVolume: { Iops: undefined }, tags: { 'ebs.csi.aws.com/IOPSPerGb': '0' } } },
  { key: 'iopsPerGB', name: 'with iops, both above 0 -> refused', parameters: { type: 'io2', iops: '1000', iopsPerGB: '10' }, refused: { key: 'iopsPerGB', problem: /cannot be combined with "iops"/ } },
  { key: 'iopsPerGB', name: 'too low without auto-increase -> refused (EC2 would refuse it)', parameters: { type: 'io1', iopsPerGB: '1' }, refused: { key: 'iopsPerGB', problem: /below the minimum of 100/ } },

  // allowAutoIOPSPerGBIncrease
  { key: 'allowAutoIOPSPerGBIncrease', name: '"true" -> a too-low Iops raised to the minimum', parameters: { type: 'io1', iopsPerGB: '1', allowAutoIOPSPerGBIncrease: 'true' }, claim: { requestStorage: '4Gi' }, effect: { createVolume: { Iops: 100 } } },
  { key: 'allowAutoIOPSPerGBIncrease', name: 'in lower case, as CSI migration writes it -> the same', parameters: { type: 'io1', iopsPerGB: '1', allowautoiopspergbincrease: 'true' }, claim: { requestStorage: '4Gi' }, effect: { createVolume: { Iops: 100 } } },
  { key: 'allowAutoIOPSPerGBIncrease', name: '"True" -> false, so too low is refused', parameters: { type: 'io1', iops: '50', allowAutoIOPSPerGBIncrease: 'True' }, refused: { key: 'iops', problem: /below the minimum/ } },

  // allowAutoIOPSIncreaseOnModify
  { key: 'allowAutoIOPSIncreaseOnModify', name: '"true" -> tag AllowAutoIOPSIncreaseOnModify "true"', parameters: { allowAutoIOPSIncreaseOnModify: 'true' }, effect: { tags: { 'ebs.csi.aws.com/AllowAutoIOPSIncreaseOnModify': 'true' } } },
  { key: 'allowAutoIOPSIncreaseOnModify', name: '"yes" -> tag "false"', parameters: { allowAutoIOPSIncreaseOnModify: 'yes' }, effect: { tags: { 'ebs.csi.aws.com/AllowAutoIOPSIncreaseOnModify': 'false' } } },

  // throughput
  { key: 'throughput', name: '500 -> Throughput 500', parameters: { throughput: '500' }, effect: { createVolume: { Throughput: 500 } } },
  { key: 'throughput', name: '0 -> not set', parameters: { throughput: '0' }, effect: { createVolume: { Throughput: undefined } } },
  { key: 'throughput', name: 'on io2 -> refused (EC2 would refuse it)', parameters: { type: 'io2', iops: '1000', throughput: '500' }, refused: { key: 'throughput', problem: /only gp3/ } },

  // encrypted, kmsKeyId
  { key: 'encrypted', name: '"true" -> Encrypted true', parameters: { encrypted: 'true' }, effect: { createVolume: { Encrypted: true, KmsKeyId: undefined } } },
  { key: 'encrypted', name: '"TRUE" -> Encrypted false (only "true" is true)', parameters: { encrypted: 'TRUE' }, effect: { createVolume: { Encrypted: false } } },
  { key: 'kmsKeyId', name: 'a key -> KmsKeyId, and Encrypted forced true', parameters: { encrypted: 'false', kmsKeyId: 'arn:aws:kms:us-east-1:111122223333:key/k' }, effect: { createVolume: { Encrypted: true, KmsKeyId: 'arn:aws:kms:us-east-1:111122223333:key/k' } } },

  // fstype
  { key: 'csi.storage.k8s.io/fstype', name: 'xfs -> PV csi.fsType xfs', parameters: { 'csi.storage.k8s.io/fstype': 'xfs' }, effect: { pv: { fsType: 'xfs' } } },
  { key: 'csi.storage.k8s.io/fstype', name: 'absent -> PV csi.fsType ext4', parameters: {}, effect: { pv: { fsType: 'ext4' } } },
  { key: 'csi.storage.k8s.io/fstype', name: 'on a Block claim -> ignored, no csi.fsType', parameters: { 'csi.storage.k8s.io/fstype': 'xfs' }, claim: { volumeMode: 'Block' }, effect: { pv: { fsType: undefined } } },
  { key: 'csi.storage.k8s.io/fstype', name: 'ext2 -> refused (the node plugin refuses it)', parameters: { 'csi.storage.k8s.io/fstype': 'ext2' }, refused: { key: 'csi.storage.k8s.io/fstype', problem: /not a filesystem the EBS CSI node plugin mounts/ } },
  { key: 'csi.storage.k8s.io/fstype', name: 'key in other case -> refused (case-sensitive)', parameters: { 'CSI.storage.k8s.io/fstype': 'xfs' }, refused: { key: 'CSI.storage.k8s.io/fstype', problem: /not a StorageClass parameter/ } },
  { key: 'fstype', name: 'legacy key, any case -> PV csi.fsType', parameters: { FsType: 'ext3' }, effect: { pv: { fsType: 'ext3' } } },
  { key: 'fstype', name: 'with csi.storage.k8s.io/fstype -> refused', parameters: { fstype: 'xfs', 'csi.storage.k8s.io/fstype': 'xfs' }, refused: { key: 'fstype', problem: /cannot be combined/ } },

  // formatting options
  { key: 'blockSize', name: '4096 -> PV attribute blocksize', parameters: { blockSize: '4096' }, effect: { pv: { volumeAttributes: { blocksize: '4096' } } } },
  { key: 'blockSize', name: 'not alphanumeric -> refused', parameters: { blockSize: '4k!' }, refused: { key: 'blockSize', problem: /letters and digits only/ } },
  { key: 'inodeSize', name: '512 -> PV attribute inodesize', parameters: { inodeSize: '512' }, effect: { pv: { volumeAttributes: { inodesize: '512' } } } },
  { key: 'bytesPerInode', name: '16384 -> PV attribute bytesperinode', parameters: { bytesPerInode: '16384' }, effect: { pv: { volumeAttributes: { bytesperinode: '16384' } } } },
  { key: 'bytesPerInode', name: 'with xfs -> refused', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', bytesPerInode: '16384' }, refused: { key: 'bytesPerInode', problem: /fstype xfs/ } },
  { key: 'numberOfInodes', name: '100000 -> PV attribute numberofinodes', parameters: { numberOfInodes: '100000' }, effect: { pv: { volumeAttributes: { numberofinodes: '100000' } } } },
  { key: 'ext4BigAlloc', name: '"true" -> PV attribute ext4bigalloc', parameters: { ext4BigAlloc: 'true' }, effect: { pv: { volumeAttributes: { ext4bigalloc: 'true' } } } },
  { key: 'ext4ClusterSize', name: 'with ext4BigAlloc -> PV attribute ext4clustersize', parameters: { ext4BigAlloc: 'true', ext4ClusterSize: '16k' }, effect: { pv: { volumeAttributes: { ext4bigalloc: 'true', ext4clustersize: '16k' } } } },
  { key: 'ext4ClusterSize', name: 'without ext4BigAlloc -> refused', parameters: { ext4ClusterSize: '16k' }, refused: { key: 'ext4ClusterSize', problem: /needs ext4BigAlloc/ } },
  { key: 'ext4EncryptionSupport', name: '"true" -> PV attribute ext4encryptionsupport', parameters: { ext4EncryptionSupport: 'true' }, effect: { pv: { volumeAttributes: { ext4encryptionsupport: 'true' } } } },
  { key: 'ext4EncryptionSupport', name: 'with xfs -> refused', parameters: { 'csi.storage.k8s.io/fstype': 'xfs', ext4EncryptionSupport: 'true' }, refused: { key: 'ext4EncryptionSupport', problem: /fstype xfs/ } },
  { key: 'blockSize', name: 'on a Block claim -> refused', parameters: { blockSize: '4096' }, claim: { volumeMode: 'Block' }, refused: { key: 'blockSize', problem: /volumeMode Block/ } },

  // initialization
  { key: 'volumeInitializationRate', name: '200 -> refused: needs a snapshot source', parameters: { volumeInitializationRate: '200' }, refused: { key: 'volumeInitializationRate', problem: /only to a volume restored from a snapshot/ } },
  { key: 'volumeInitializationRate', name: '0 -> not set, accepted', parameters: { volumeInitializationRate: '0' }, effect: { createVolume: { VolumeType: 'gp3' } } },
  { key: 'volumeInitializationRate', name: 'not a number -> refused (ParseInt error)', parameters: { volumeInitializationRate: 'fast' }, refused: { key: 'volumeInitializationRate', problem: /not a whole number/ } },
  { key: 'blockAttachUntilInitialized', name: '"true" -> PV attribute blockattachuntilinitialized', parameters: { blockAttachUntilInitialized: 'true' }, effect: { pv: { volumeAttributes: { blockattachuntilinitialized: 'true' } } } },
  { key: 'blockAttachUntilInitialized', name: '"false" -> no attribute', parameters: { blockAttachUntilInitialized: 'false' }, effect: { pv: { volumeAttributes: {} } } },

  // no-op
  { key: 'blockExpress', name: 'any value -> accepted, no effect (all io2 is Block Express)', parameters: { type: 'io2', iops: '1000', blockExpress: 'true' }, effect: { createVolume: { VolumeType: 'io2', Iops: 1000 }, tags: {}, pv: { volumeAttributes: {} } } },

  // tags
  { key: 'tagSpecification*', name: 'key=value with a template -> a tag', parameters: { tagSpecification_1: 'owner={{ .PVCNamespace | toUpper }}' }, effect: { tags: { owner: 'SHOP' } } },
  { key: 'tagSpecification*', name: 'no underscore -> a tag', parameters: { tagSpecificationTeam: 'team=a' }, effect: { tags: { team: 'a' } } },
  { key: 'tagSpecification*', name: 'a reserved key -> refused', parameters: { tagSpecification_1: 'ebs.csi.aws.com/IOPSPerGb=1' }, refused: { key: 'tagSpecification_1', problem: /is reserved/ } },
  { key: 'tagSpecification*', name: 'a template error -> refused, never literal', parameters: { tagSpecification_1: 'x={{ .PVCName | js }}' }, refused: { key: 'tagSpecification_1', problem: /cannot call 'js' function/ } },

  // the provisioner's keys
  { key: 'csi.storage.k8s.io/*-secret-*', name: 'a secret reference -> ignored, as the provisioner strips it', parameters: { 'csi.storage.k8s.io/provisioner-secret-name': 's' }, effect: { createVolume: { VolumeType: 'gp3' }, tags: {} } },
  { key: 'csi.storage.k8s.io/pvc/name', name: 'set by hand -> refused, as the provisioner refuses it', parameters: { 'csi.storage.k8s.io/pvc/name': 'x' }, refused: { key: 'csi.storage.k8s.io/pvc/name', problem: /not a StorageClass parameter/ } },
  { key: 'outpostArn', name: 'in a StorageClass -> refused, as the driver refuses it', parameters: { outpostArn: 'arn:aws:outposts:us-east-1:111122223333:outpost/op-1' }, refused: { key: 'outpostArn', problem: /not a StorageClass parameter/ } },
];

describe('every v1.64 parameter key -> CreateVolume field, PV field, tag or refusal', () => {
  it.each(rows.map((row) => ({ ...row, title: `${row.key}: ${row.name}` })))('$title', ({ parameters, claim, effect, refused }) => {
    if (refused) {
      expectParameterError(() => spec(parameters, claim), refused.key, refused.problem);
      return;
    }
    const result = spec(parameters, claim);
    const createVolume = createVolumeOf(result);
    for (const [field, value] of Object.entries(effect?.createVolume ?? {})) expect(createVolume[field as keyof typeof createVolume], field).toStrictEqual(value);
    if (effect?.tags) expect({ ...result.tags, ...result.driverTags }).toStrictEqual(effect.tags);
    if (effect?.pv && 'fsType' in effect.pv) expect(result.fsType).toBe(effect.pv.fsType);
    if (effect?.pv?.volumeAttributes) expect(result.volumeAttributes).toStrictEqual(effect.pv.volumeAttributes);
  });

  const allKeys = [...DOCUMENTED_KEYS, ...UNDOCUMENTED_KEYS, ...OTHER_KEYS];

  it('the table covers every key of the driver, documented or not, and every key volhook knows', () => {
    expect(new Set(rows.map((row) => row.key))).toStrictEqual(new Set(allKeys));
    for (const key of Object.values(PARAMETER_KEYS)) expect(allKeys).toContain(key);
  });

  it('docs/parameters.md has a row for every key', () => {
    const docs = readFileSync(new URL('../../docs/parameters.md', import.meta.url), 'utf8');
    for (const key of allKeys) expect(docs, key).toContain(`| \`${key}\``);
  });
});
