import { describe, expect, it } from 'vitest';
import { volumeSpecFor } from '../../lib/storageclass/index.js';
import { expectParameterError, input, spec } from './helpers.js';

describe('size', () => {
  it.each([
    { request: '1Gi', sizeGiB: 1 },
    { request: '1073741825', sizeGiB: 2 },
    { request: '1500Mi', sizeGiB: 2 },
    { request: '1G', sizeGiB: 1 },
    { request: '1.5Gi', sizeGiB: 2 },
    { request: '1', sizeGiB: 1 },
    { request: '20Gi', sizeGiB: 20 },
    { request: '1Ti', sizeGiB: 1_024 },
    { request: '100e9', sizeGiB: 94 },
  ])('request $request -> $sizeGiB GiB', ({ request, sizeGiB }) => {
    expect(spec({}, { requestStorage: request }).sizeGiB).toBe(sizeGiB);
  });

  const ranges = [
    { type: 'gp3', min: 1, max: 65_536 },
    { type: 'gp2', min: 1, max: 16_384 },
    { type: 'io1', min: 4, max: 16_384 },
    { type: 'io2', min: 4, max: 65_536 },
    { type: 'st1', min: 125, max: 16_384 },
    { type: 'sc1', min: 125, max: 16_384 },
    { type: 'standard', min: 1, max: 1_024 },
  ];

  it.each(ranges.flatMap(({ type, min, max }) => [
    { name: `${type} at its minimum ${min} GiB -> accepted`, type, gib: min },
    { name: `${type} at its maximum ${max} GiB -> accepted`, type, gib: max },
  ]))('$name', ({ type, gib }) => {
    expect(spec({ type }, { requestStorage: `${gib}Gi` }).sizeGiB).toBe(gib);
  });

  it.each(ranges.flatMap(({ type, min, max }) => [
    ...(min > 1 ? [{ name: `${type} at ${min - 1} GiB -> error naming the range`, type, gib: min - 1, min, max }] : []),
    { name: `${type} at ${max + 1} GiB -> error naming the range`, type, gib: max + 1, min, max },
  ]))('$name', ({ type, gib, min, max }) => {
    expectParameterError(
      () => spec({ type }, { requestStorage: `${gib}Gi` }),
      'storage',
      new RegExp(`${gib} GiB, but a ${type} volume must be from ${min} to ${max} GiB`),
    );
  });

  it.each(['0', '0Gi', '-1Gi', '-0.5'])('request %s -> error, nothing to create', (request) => {
    expectParameterError(() => spec({}, { requestStorage: request }), 'storage', /more than 0 bytes/);
  });

  it.each(['', 'ten gigs', '10GB'])('request "%s" -> error, not a quantity', (request) => {
    expectParameterError(() => spec({}, { requestStorage: request }), 'storage', /not a Kubernetes quantity/);
  });

  it('request beyond any EBS size (1e30) -> range error, not a crash', () => {
    expectParameterError(() => spec({}, { requestStorage: '1e30' }), 'storage', /must be from 1 to 65536 GiB/);
  });
});

describe('volumeSpecFor', () => {
  it('empty class, plain claim -> gp3 defaults and nothing else', () => {
    expect(spec({})).toStrictEqual({
      type: 'gp3',
      sizeGiB: 10,
      encrypted: false,
      multiAttach: false,
      fsType: 'ext4',
      volumeAttributes: {},
      tags: {},
      driverTags: {},
    });
  });

  it('everything set on gp3 Filesystem -> every field filled', () => {
    expect(
      spec(
        {
          type: 'gp3',
          iops: '6000',
          throughput: '500',
          encrypted: 'true',
          kmsKeyId: 'alias/ebs',
          'csi.storage.k8s.io/fstype': 'ext4',
          blockSize: '4096',
          inodeSize: '256',
          bytesPerInode: '16384',
          numberOfInodes: '100000',
          ext4BigAlloc: 'true',
          ext4ClusterSize: '65536',
          ext4EncryptionSupport: 'true',
          blockAttachUntilInitialized: 'true',
          allowAutoIOPSIncreaseOnModify: 'true',
          allowAutoIOPSPerGBIncrease: 'true',
          blockExpress: 'true',
          volumeInitializationRate: '0',
          tagSpecification_1: 'owner={{ .PVCNamespace }}',
          'csi.storage.k8s.io/provisioner-secret-name': 'ignored',
        },
        { requestStorage: '20Gi' },
      ),
    ).toStrictEqual({
      type: 'gp3',
      sizeGiB: 20,
      iops: 6_000,
      throughput: 500,
      encrypted: true,
      kmsKeyId: 'alias/ebs',
      multiAttach: false,
      fsType: 'ext4',
      volumeAttributes: {
        blocksize: '4096',
        inodesize: '256',
        bytesperinode: '16384',
        numberofinodes: '100000',
        ext4bigalloc: 'true',
        ext4clustersize: '65536',
        ext4encryptionsupport: 'true',
        blockattachuntilinitialized: 'true',
      },
      tags: { owner: 'shop' },
      driverTags: { 'ebs.csi.aws.com/AllowAutoIOPSIncreaseOnModify': 'true' },
    });
  });

  it('io2 Block ReadWriteMany -> multi-attach, no fsType, no attributes', () => {
    expect(
      volumeSpecFor(input({ type: 'io2', iops: '2000' }, { volumeMode: 'Block', accessModes: ['ReadWriteMany'], requestStorage: '100Gi' })),
    ).toStrictEqual({
      type: 'io2',
      sizeGiB: 100,
      iops: 2_000,
      encrypted: false,
      multiAttach: true,
      volumeAttributes: {},
      tags: {},
      driverTags: {},
    });
  });

  it('same input twice -> same spec, input untouched (pure)', () => {
    const parameters = { type: 'io1', iopsPerGB: '10', tagSpecification_1: 'pvc={{ .PVCName }}' };
    const frozen = structuredClone(parameters);
    expect(spec(parameters)).toStrictEqual(spec(parameters));
    expect(parameters).toStrictEqual(frozen);
  });

  it('unknown key alongside other errors -> the unknown key is reported first', () => {
    expectParameterError(() => spec({ type: 'gp4', bogus: '1' }), 'bogus', /not a StorageClass parameter/);
  });
});
