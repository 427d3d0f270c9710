/**
 * In-tree EBS PVs and their CSI form against csi-translation-lib v0.34: `TranslateInTreePVToCSI`
 * and `TranslateCSIPVToInTree` (plugins/aws_ebs.go 137–201), their topology helpers
 * (in_tree_volume.go) and `getAwsRegionFromZones`. Vectors from translate_test.go 175–195 and
 * aws_ebs_test.go 213–266 where upstream has them.
 */
import { describe, expect, it } from 'vitest';
import { PersistentVolumeSchema, type NewPersistentVolume, type PersistentVolume } from '../../lib/contract/index.js';
import {
  awsRegionFromZones,
  ebsVolumeIdOf,
  translateCsiPvToInTree,
  translateInTreePvToCsi,
  TranslationError,
} from '../../lib/migration/index.js';

const VOL = 'vol-02399794d890f9375';
const EBS_KEY = 'topology.ebs.csi.aws.com/zone';
const GA_ZONE = 'topology.kubernetes.io/zone';
const GA_REGION = 'topology.kubernetes.io/region';
const BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';
const BETA_REGION = 'failure-domain.beta.kubernetes.io/region';

type Affinity = PersistentVolume['spec']['nodeAffinity'];
const affinity = (...terms: [string, string[]][][]): Affinity => ({
  required: { nodeSelectorTerms: terms.map((exprs) => ({ matchExpressions: exprs.map(([key, values]) => ({ key, operator: 'In' as const, values })) })) },
});

/** `makeAWSEBSPV`: an in-tree PV with these labels, source and node affinity. */
function inTreePv(options: { labels?: Record<string, string>; source?: Record<string, unknown>; nodeAffinity?: Affinity } = {}): PersistentVolume {
  return PersistentVolumeSchema.parse({
    metadata: {
      name: 'pvc-in-tree',
      uid: 'pv-uid',
      annotations: { 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs' },
      ...(options.labels && { labels: options.labels }),
    },
    spec: {
      capacity: { storage: '20Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      awsElasticBlockStore: { volumeID: `aws://us-east-1a/${VOL}`, fsType: 'ext4', ...options.source },
      ...(options.nodeAffinity && { nodeAffinity: options.nodeAffinity }),
    },
  });
}

describe('TranslateInTreePVToCSI', () => {
  it('source -> csi: the EBS driver, the normalised handle, fsType, partition "0"; no awsElasticBlockStore; metadata untouched', () => {
    const pv = inTreePv();
    const before = structuredClone(pv);
    const csi = translateInTreePvToCsi(pv);
    expect(csi.spec.csi).toStrictEqual({ driver: 'ebs.csi.aws.com', volumeHandle: VOL, fsType: 'ext4', volumeAttributes: { partition: '0' } });
    expect(csi.spec.awsElasticBlockStore).toBeUndefined();
    expect(csi.metadata).toStrictEqual(before.metadata);
    expect(pv).toStrictEqual(before);
  });

  it('partition 3, readOnly, no fsType -> partition "3", readOnly true, no fsType', () => {
    const csi = translateInTreePvToCsi(inTreePv({ source: { partition: 3, readOnly: true, fsType: undefined } }));
    expect(csi.spec.csi).toStrictEqual({ driver: 'ebs.csi.aws.com', volumeHandle: VOL, readOnly: true, volumeAttributes: { partition: '3' } });
  });

  it.each<{ name: string; labels: Record<string, string> | undefined; nodeAffinity: Affinity; expected: Affinity }>([
    {
      name: 'upstream vector: beta zone and region labels, no node affinity -> topology.ebs.csi.aws.com/zone In [us-east-1a]',
      labels: { [BETA_ZONE]: 'us-east-1a', [BETA_REGION]: 'us-east-1' },
      nodeAffinity: undefined,
      expected: affinity([[EBS_KEY, ['us-east-1a']]]),
    },
    {
      name: 'upstream vector: GA labels, no node affinity -> the same',
      labels: { [GA_ZONE]: 'us-east-1a', [GA_REGION]: 'us-east-1' },
      nodeAffinity: undefined,
      expected: affinity([[EBS_KEY, ['us-east-1a']]]),
    },
    {
      name: 'upstream vector: beta labels and beta node affinity us-east-2a -> the node affinity wins',
      labels: { [BETA_ZONE]: 'us-east-1a', [BETA_REGION]: 'us-east-1' },
      nodeAffinity: affinity([[BETA_ZONE, ['us-east-2a']]]),
      expected: affinity([[EBS_KEY, ['us-east-2a']]]),
    },
    {
      name: 'GA zone and region in the node affinity -> zone key rewritten, region left',
      labels: undefined,
      nodeAffinity: affinity([[GA_ZONE, ['us-east-1a']], [GA_REGION, ['us-east-1']]]),
      expected: affinity([[EBS_KEY, ['us-east-1a']], [GA_REGION, ['us-east-1']]]),
    },
    {
      name: 'beta zone and region in the node affinity -> zone to the EBS key, region to the GA key',
      labels: undefined,
      nodeAffinity: affinity([[BETA_ZONE, ['us-east-1a']], [BETA_REGION, ['us-east-1']]]),
      expected: affinity([[EBS_KEY, ['us-east-1a']], [GA_REGION, ['us-east-1']]]),
    },
    {
      name: 'a multi-zone label "a__b" -> one expression with both zones, trimmed and sorted',
      labels: { [GA_ZONE]: 'us-east-1b__us-east-1a' },
      nodeAffinity: undefined,
      expected: affinity([[EBS_KEY, ['us-east-1a', 'us-east-1b']]]),
    },
    {
      name: 'no labels, no node affinity -> none',
      labels: undefined,
      nodeAffinity: undefined,
      expected: undefined,
    },
  ])('$name', ({ labels, nodeAffinity, expected }) => {
    const pv = inTreePv({ ...(labels && { labels }), ...(nodeAffinity && { nodeAffinity }) });
    const csi = translateInTreePvToCsi(pv);
    expect(csi.spec.nodeAffinity).toStrictEqual(expected);
    expect(csi.metadata.labels).toStrictEqual(pv.metadata.labels);
  });

  it('a malformed aws:// ID -> "failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (…)"', () => {
    const pv = inTreePv({ source: { volumeID: 'aws://us-east-1a/0123' } });
    expect(() => translateInTreePvToCsi(pv)).toThrow(new TranslationError('failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://us-east-1a/0123)'));
  });
});

/** A CSI PV as volhook's builder makes it, before the back translation. */
function csiPv(options: { nodeAffinity?: Affinity; volumeAttributes?: Record<string, string>; fsType?: string; labels?: Record<string, string> } = {}): NewPersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pvc-x', annotations: { 'pv.kubernetes.io/provisioned-by': 'kubernetes.io/aws-ebs' }, ...(options.labels && { labels: options.labels }) },
    spec: {
      capacity: { storage: '20Gi' },
      accessModes: ['ReadWriteOnce'],
      volumeMode: 'Filesystem',
      persistentVolumeReclaimPolicy: 'Delete',
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'ns', name: 'data', uid: 'u' },
      csi: {
        driver: 'ebs.csi.aws.com',
        volumeHandle: VOL,
        ...('fsType' in options ? options.fsType !== undefined && { fsType: options.fsType } : { fsType: 'ext4' }),
        ...(options.volumeAttributes && { volumeAttributes: options.volumeAttributes }),
      },
      nodeAffinity: options.nodeAffinity ?? affinity([[GA_ZONE, ['us-east-1a']]]),
    },
  };
}

describe('TranslateCSIPVToInTree', () => {
  it('the EBS driver\'s GA zone -> awsElasticBlockStore with the bare ID; region appended to the term; zone and region labels', () => {
    const pv = csiPv();
    const before = structuredClone(pv);
    const inTree = translateCsiPvToInTree(pv);
    expect(inTree.spec.awsElasticBlockStore).toStrictEqual({ volumeID: VOL, fsType: 'ext4' });
    expect(inTree.spec.csi).toBeUndefined();
    expect(inTree.spec.nodeAffinity).toStrictEqual(affinity([[GA_ZONE, ['us-east-1a']], [GA_REGION, ['us-east-1']]]));
    expect(inTree.metadata.labels).toStrictEqual({ [GA_ZONE]: 'us-east-1a', [GA_REGION]: 'us-east-1' });
    expect(pv).toStrictEqual(before);
  });

  it('a driver before v1.33 (topology.ebs.csi.aws.com/zone) -> the same PV: GA is the default family', () => {
    expect(translateCsiPvToInTree(csiPv({ nodeAffinity: affinity([[EBS_KEY, ['us-east-1a']]]) }))).toStrictEqual(translateCsiPvToInTree(csiPv()));
  });

  it('volume attributes -> partition kept when not 0, every other attribute dropped', () => {
    expect(translateCsiPvToInTree(csiPv({ volumeAttributes: { partition: '2', blocksize: '4096' } })).spec.awsElasticBlockStore).toStrictEqual({ volumeID: VOL, fsType: 'ext4', partition: 2 });
    expect(translateCsiPvToInTree(csiPv({ volumeAttributes: { partition: '0' } })).spec.awsElasticBlockStore).toStrictEqual({ volumeID: VOL, fsType: 'ext4' });
  });

  it('Block (no fsType) -> no fsType', () => {
    expect(translateCsiPvToInTree(csiPv({ fsType: undefined })).spec.awsElasticBlockStore).toStrictEqual({ volumeID: VOL });
  });

  it('a PV already on beta keys with labels -> beta family kept, labels not overwritten', () => {
    const inTree = translateCsiPvToInTree(csiPv({ nodeAffinity: affinity([[BETA_ZONE, ['us-east-1b']], [EBS_KEY, ['us-east-1b']]]), labels: { [BETA_ZONE]: 'mine' } }));
    expect(inTree.spec.nodeAffinity).toStrictEqual(affinity([[BETA_ZONE, ['us-east-1b']], [BETA_ZONE, ['us-east-1b']], [BETA_REGION, ['us-east-1']]]));
    expect(inTree.metadata.labels).toStrictEqual({ [BETA_ZONE]: 'mine', [BETA_REGION]: 'us-east-1' });
  });

  it('Outposts keys -> kept; two terms -> each gets its region, the zone label joins the zones with "__"', () => {
    const outpost = ['topology.ebs.csi.aws.com/outpost-id', ['op-0123']] as [string, string[]];
    const inTree = translateCsiPvToInTree(csiPv({ nodeAffinity: affinity([[GA_ZONE, ['us-east-1a']], outpost], [[GA_ZONE, ['us-east-1b']]]) }));
    expect(inTree.spec.nodeAffinity).toStrictEqual(
      affinity([[GA_ZONE, ['us-east-1a']], outpost, [GA_REGION, ['us-east-1']]], [[GA_ZONE, ['us-east-1b']], [GA_REGION, ['us-east-1']]]),
    );
    expect(inTree.metadata.labels).toStrictEqual({ [GA_ZONE]: 'us-east-1a__us-east-1b', [GA_REGION]: 'us-east-1' });
  });

  it('a zone of no known form -> TranslationError (upstream then deletes the disk; volhook checks before creating it)', () => {
    expect(() => translateCsiPvToInTree(csiPv({ nodeAffinity: affinity([[GA_ZONE, ['local']]]) }))).toThrow(
      'failed to translate topology: Unexpected zone format: local is not a valid AWS zone',
    );
  });

  it('a partition that is not a number -> TranslationError', () => {
    expect(() => translateCsiPvToInTree(csiPv({ volumeAttributes: { partition: 'x' } }))).toThrow('failed to convert partition x to integer');
  });
});

describe('getAwsRegionFromZones', () => {
  it.each([
    [['us-west-2a', 'us-west-2b'], 'us-west-2'],
    [['us-gov-east-1a'], 'us-gov-east-1'],
    [['us-east-1-wl1-bos-wlz-1'], 'us-east-1'],
    [['us-west-2-lax-1a'], 'us-west-2'],
  ])('upstream vector: %j -> %s', (zones, region) => {
    expect(awsRegionFromZones(zones)).toBe(region);
  });

  it.each([[[]], [['us-west-2a', 'us-east-1a']], [['us-west-2']], [['us-west-2ab']], [['us-west']]])('upstream vector: %j -> error', (zones) => {
    expect(() => awsRegionFromZones(zones)).toThrow(TranslationError);
  });
});

describe('ebsVolumeIdOf: the volume a PV names, as external-attacher and external-provisioner read it', () => {
  it.each([
    ['a CSI PV of the driver -> its handle', PersistentVolumeSchema.parse({ ...inTreePv(), spec: { ...inTreePv().spec, awsElasticBlockStore: undefined, csi: { driver: 'ebs.csi.aws.com', volumeHandle: VOL } } }), 'ebs.csi.aws.com', VOL],
    ['a CSI PV of another driver -> none', PersistentVolumeSchema.parse({ ...inTreePv(), spec: { ...inTreePv().spec, awsElasticBlockStore: undefined, csi: { driver: 'efs.csi.aws.com', volumeHandle: 'fs-1' } } }), 'ebs.csi.aws.com', undefined],
    ['an in-tree PV, aws://zone/vol- -> vol-', inTreePv(), 'ebs.csi.aws.com', VOL],
    ['an in-tree PV, aws:///vol- -> vol-', inTreePv({ source: { volumeID: `aws:///${VOL}` } }), 'ebs.csi.aws.com', VOL],
    ['an in-tree PV, bare vol- -> vol-', inTreePv({ source: { volumeID: VOL } }), 'ebs.csi.aws.com', VOL],
    ['an in-tree PV, for a driver that is not EBS\'s -> none', inTreePv(), 'example.com/ebs', undefined],
  ])('%s', (_name, pv, driver, expected) => {
    expect(ebsVolumeIdOf(pv, driver)).toBe(expected);
  });
});
