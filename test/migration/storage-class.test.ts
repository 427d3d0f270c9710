/**
 * In-tree `kubernetes.io/aws-ebs` StorageClasses translated to CSI, field by field against
 * csi-translation-lib v0.34 (`TranslateInTreeStorageClassToCSI`, plugins/aws_ebs.go 60–100,
 * `translateAllowedTopologies`, in_tree_volume.go 310–336). Rows marked `upstream vector` are
 * the cases of plugins/aws_ebs_test.go 83–114; rows marked `deviation` are where upstream's
 * answer depends on Go's random map order (or keeps whitespace) and volhook decides.
 */
import { describe, expect, it } from 'vitest';
import { StorageClassSchema, type StorageClass } from '../../lib/contract/index.js';
import {
  provisioningClass,
  translateInTreeStorageClassToCsi,
  TranslationError,
  withInTreeVolumeType,
} from '../../lib/migration/index.js';

const EBS_KEY = 'topology.ebs.csi.aws.com/zone';
const GA_KEY = 'topology.kubernetes.io/zone';
const BETA_KEY = 'failure-domain.beta.kubernetes.io/zone';
const KMS = 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';

type Terms = StorageClass['allowedTopologies'];

const inTree = (parameters: Record<string, string> | undefined, allowedTopologies?: Terms): StorageClass =>
  StorageClassSchema.parse({
    metadata: { name: 'gp2' },
    provisioner: 'kubernetes.io/aws-ebs',
    ...(parameters && { parameters }),
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
    mountOptions: ['noatime'],
    ...(allowedTopologies && { allowedTopologies }),
  });

const term = (...expressions: [string, string[]][]) => ({ matchLabelExpressions: expressions.map(([key, values]) => ({ key, values })) });

interface Row {
  name: string;
  parameters: Record<string, string> | undefined;
  allowedTopologies?: Terms;
  expected: { parameters: Record<string, string>; allowedTopologies?: Terms };
}

const rows: Row[] = [
  // upstream vectors
  { name: 'upstream vector: {foo: bar} -> unchanged', parameters: { foo: 'bar' }, expected: { parameters: { foo: 'bar' } } },
  { name: 'upstream vector: {} -> {}', parameters: {}, expected: { parameters: {} } },
  { name: 'upstream vector: no parameters -> {}', parameters: undefined, expected: { parameters: {} } },
  { name: 'upstream vector: fstype ext3 -> csi.storage.k8s.io/fstype ext3', parameters: { fstype: 'ext3' }, expected: { parameters: { 'csi.storage.k8s.io/fstype': 'ext3' } } },
  {
    name: 'upstream vector: iopsPerGB 100 -> kept as spelled, allowautoiopspergbincrease "true" added',
    parameters: { iopsPerGB: '100' },
    expected: { parameters: { iopsPerGB: '100', allowautoiopspergbincrease: 'true' } },
  },
  // the rules, key by key
  { name: 'fsType (any case) -> csi.storage.k8s.io/fstype, value unchanged', parameters: { FSType: 'xfs' }, expected: { parameters: { 'csi.storage.k8s.io/fstype': 'xfs' } } },
  { name: 'IOPSPERGB -> kept in its own spelling', parameters: { IOPSPERGB: '10' }, expected: { parameters: { IOPSPERGB: '10', allowautoiopspergbincrease: 'true' } } },
  {
    name: 'type, encrypted, kmsKeyId -> unchanged, their spelling kept',
    parameters: { type: 'io1', Encrypted: 'true', kmsKeyId: KMS },
    expected: { parameters: { type: 'io1', Encrypted: 'true', kmsKeyId: KMS } },
  },
  { name: 'a key the in-tree plugin never had -> passed on (volhook refuses it later, as the driver does)', parameters: { blockExpress: 'true' }, expected: { parameters: { blockExpress: 'true' } } },
  {
    name: 'zone -> removed; allowedTopologies: one term, topology.ebs.csi.aws.com/zone In [zone]',
    parameters: { type: 'gp2', zone: 'us-east-1b' },
    expected: { parameters: { type: 'gp2' }, allowedTopologies: [term([EBS_KEY, ['us-east-1b']])] },
  },
  {
    name: 'zones a,b -> removed; one term, one expression with both, order kept',
    parameters: { Zones: 'us-east-1c,us-east-1a' },
    expected: { parameters: {}, allowedTopologies: [term([EBS_KEY, ['us-east-1c', 'us-east-1a']])] },
  },
  {
    name: 'deviation: zones "a, b" -> entries trimmed, as the in-tree plugin read them (upstream keeps " b")',
    parameters: { zones: 'us-east-1a, us-east-1b' },
    expected: { parameters: {}, allowedTopologies: [term([EBS_KEY, ['us-east-1a', 'us-east-1b']])] },
  },
  {
    name: 'allowedTopologies on topology.kubernetes.io/zone -> rewritten to topology.ebs.csi.aws.com/zone',
    parameters: { type: 'gp2' },
    allowedTopologies: [term([GA_KEY, ['us-east-1a', 'us-east-1b']])],
    expected: { parameters: { type: 'gp2' }, allowedTopologies: [term([EBS_KEY, ['us-east-1a', 'us-east-1b']])] },
  },
  {
    name: 'allowedTopologies on failure-domain.beta.kubernetes.io/zone -> rewritten too',
    parameters: {},
    allowedTopologies: [term([BETA_KEY, ['us-east-1c']])],
    expected: { parameters: {}, allowedTopologies: [term([EBS_KEY, ['us-east-1c']])] },
  },
  {
    name: 'allowedTopologies with other keys and several terms -> other keys unchanged, term structure kept',
    parameters: {},
    allowedTopologies: [term([GA_KEY, ['us-east-1a']], ['topology.k8s.aws/zone-id', ['use1-az1']]), term([EBS_KEY, ['us-east-1b']])],
    expected: {
      parameters: {},
      allowedTopologies: [term([EBS_KEY, ['us-east-1a']], ['topology.k8s.aws/zone-id', ['use1-az1']]), term([EBS_KEY, ['us-east-1b']])],
    },
  },
  {
    name: 'deviation: iopsPerGB with allowAutoIOPSPerGBIncrease "false" -> "true" under the class\'s spelling, no lower-case twin',
    parameters: { iopsPerGB: '50', allowAutoIOPSPerGBIncrease: 'false', type: 'io1' },
    expected: { parameters: { iopsPerGB: '50', allowAutoIOPSPerGBIncrease: 'true', type: 'io1' } },
  },
  {
    name: 'EKS gp2 class {fsType: ext4, type: gp2} -> {csi.storage.k8s.io/fstype: ext4, type: gp2}',
    parameters: { fsType: 'ext4', type: 'gp2' },
    expected: { parameters: { 'csi.storage.k8s.io/fstype': 'ext4', type: 'gp2' } },
  },
  {
    name: 'every in-tree key at once (research §2.3) -> renamed, removed, added, passed on',
    parameters: { type: 'gp2', iopsPerGB: '10', encrypted: 'true', kmsKeyId: KMS, fsType: 'xfs', zones: 'us-east-1a,us-east-1b' },
    expected: {
      parameters: { type: 'gp2', iopsPerGB: '10', allowautoiopspergbincrease: 'true', encrypted: 'true', kmsKeyId: KMS, 'csi.storage.k8s.io/fstype': 'xfs' },
      allowedTopologies: [term([EBS_KEY, ['us-east-1a', 'us-east-1b']])],
    },
  },
];

describe('TranslateInTreeStorageClassToCSI, field by field', () => {
  it.each(rows)('$name', ({ parameters, allowedTopologies, expected }) => {
    const sc = inTree(parameters, allowedTopologies);
    const before = structuredClone(sc);
    const translated = translateInTreeStorageClassToCsi(sc);

    expect(translated.parameters).toStrictEqual(expected.parameters);
    expect(translated.allowedTopologies).toStrictEqual(expected.allowedTopologies);
    // Everything but parameters and allowedTopologies is the class's own.
    const { parameters: _p, allowedTopologies: _t, ...rest } = translated;
    const { parameters: _bp, allowedTopologies: _bt, ...restBefore } = before;
    expect(rest).toStrictEqual(restBefore);
    // The caller's class is never changed (upstream translates a deep copy).
    expect(sc).toStrictEqual(before);
  });

  it.each<{ name: string; parameters: Record<string, string>; allowedTopologies?: Terms; error: string }>([
    {
      name: 'zone and allowedTopologies -> upstream\'s error',
      parameters: { zone: 'us-east-1a' },
      allowedTopologies: [term([GA_KEY, ['us-east-1a']])],
      error: 'cannot simultaneously set allowed topologies and zone/zones parameters',
    },
    {
      name: 'zones and allowedTopologies -> upstream\'s error',
      parameters: { zones: 'us-east-1a,us-east-1b' },
      allowedTopologies: [term([EBS_KEY, ['us-east-1a']])],
      error: 'cannot simultaneously set allowed topologies and zone/zones parameters',
    },
    {
      name: 'deviation: zone and zones -> refused, as the in-tree plugin refused them (upstream: the last in map order wins)',
      parameters: { zone: 'us-east-1a', zones: 'us-east-1b' },
      error: 'both zone and zones StorageClass parameters must not be used at the same time',
    },
    {
      name: 'deviation: fsType and csi.storage.k8s.io/fstype -> refused (upstream: the last in map order wins)',
      parameters: { fsType: 'ext4', 'csi.storage.k8s.io/fstype': 'xfs' },
      error: 'parameters "fsType" and "csi.storage.k8s.io/fstype" both set the filesystem type; give one',
    },
    {
      name: 'deviation: zones with an empty entry -> refused, as the in-tree plugin did',
      parameters: { zones: 'us-east-1a,,us-east-1b' },
      error: 'zones: "us-east-1a,,us-east-1b" must be zone names separated by commas, with none empty',
    },
  ])('$name', ({ parameters, allowedTopologies, error }) => {
    const translate = () => translateInTreeStorageClassToCsi(inTree(parameters, allowedTopologies));
    expect(translate).toThrow(TranslationError);
    expect(translate).toThrow(error);
  });
});

describe('the in-tree volume type for a class without one (volhook; upstream migration makes gp3)', () => {
  it.each<{ name: string; parameters: Record<string, string>; expected: Record<string, string> }>([
    { name: 'no type -> type gp2, as the in-tree plugin made', parameters: { fsType: 'ext4' }, expected: { fsType: 'ext4', type: 'gp2' } },
    { name: 'type "" -> gp2 under the class\'s spelling', parameters: { Type: '' }, expected: { Type: 'gp2' } },
    { name: 'type io1 -> unchanged', parameters: { type: 'io1', iopsPerGB: '10' }, expected: { type: 'io1', iopsPerGB: '10' } },
    { name: 'TYPE gp3 -> unchanged', parameters: { TYPE: 'gp3' }, expected: { TYPE: 'gp3' } },
  ])('$name', ({ parameters, expected }) => {
    expect(withInTreeVolumeType(inTree(parameters)).parameters).toStrictEqual(expected);
  });
});

describe('provisioningClass: which classes a provisioner provisions, and with what', () => {
  const csiClass = StorageClassSchema.parse({ metadata: { name: 'gp3' }, provisioner: 'ebs.csi.aws.com', parameters: { type: 'gp3' } });

  it('a class naming the provisioner -> itself, not migrated', () => {
    expect(provisioningClass(csiClass, 'ebs.csi.aws.com')).toStrictEqual({ storageClass: csiClass });
  });

  it('an in-tree aws-ebs class, for ebs.csi.aws.com -> translated, gp2 when untyped, migrated from kubernetes.io/aws-ebs', () => {
    const result = provisioningClass(inTree({ fsType: 'xfs', zone: 'us-east-1a' }), 'ebs.csi.aws.com');
    expect(result?.migratedFrom).toBe('kubernetes.io/aws-ebs');
    expect(result?.storageClass.parameters).toStrictEqual({ 'csi.storage.k8s.io/fstype': 'xfs', type: 'gp2' });
    expect(result?.storageClass.allowedTopologies).toStrictEqual([term([EBS_KEY, ['us-east-1a']])]);
    expect(result?.storageClass.provisioner).toBe('kubernetes.io/aws-ebs');
  });

  it('an in-tree aws-ebs class, for a provisioner that is not the EBS CSI driver -> not its class', () => {
    expect(provisioningClass(inTree({ type: 'gp2' }), 'example.com/ebs')).toBeUndefined();
  });

  it('another provisioner\'s class -> not ours', () => {
    expect(provisioningClass({ ...csiClass, provisioner: 'efs.csi.aws.com' }, 'ebs.csi.aws.com')).toBeUndefined();
  });

  it('an in-tree class that cannot be translated -> TranslationError', () => {
    expect(() => provisioningClass(inTree({ zone: 'us-east-1a' }, [term([GA_KEY, ['us-east-1a']])]), 'ebs.csi.aws.com')).toThrow(TranslationError);
  });
});
