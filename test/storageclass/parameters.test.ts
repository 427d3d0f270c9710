import { describe, expect, it } from 'vitest';
import { IGNORED_PARAMETER_KEYS } from '../../lib/storageclass/index.js';
import { expectParameterError, spec } from './helpers.js';

describe('parameter keys', () => {
  it.each([
    { name: 'unknown key -> error naming it', key: 'iopsPerGiB' },
    { name: 'csi.storage.k8s.io/ key the provisioner does not know -> error', key: 'csi.storage.k8s.io/pvc/name' },
    { name: 'deprecated unprefixed secret key (not stripped upstream either) -> error', key: 'csiProvisionerSecretName' },
    { name: 'tag prefix in lower case (the driver\'s prefix is case-sensitive) -> error', key: 'tagspecification_1' },
    { name: 'tag prefix in capitals -> error', key: 'TagSpecification_1' },
    { name: 'csi.storage.k8s.io/fstype in other case (passes the provisioner, unknown to the driver) -> error', key: 'CSI.Storage.K8s.io/FSType' },
    { name: 'secret key in other case (not stripped by the provisioner) -> error', key: 'csi.storage.k8s.io/Provisioner-Secret-Name' },
    { name: 'outpostArn (a VolumeSnapshotClass parameter, never a StorageClass one) -> error', key: 'outpostArn' },
  ])('$name', ({ key }) => {
    expectParameterError(() => spec({ type: 'gp3', [key]: 'x' }), key, /is not a StorageClass parameter of the EBS CSI driver/);
  });

  it('same key twice in different case with different values -> error naming the second', () => {
    expectParameterError(() => spec({ iops: '4000', IOPS: '5000' }), 'IOPS', /same key as "iops"/);
  });

  it('same key twice in different case with the same value (a CSI-migration translation) -> accepted', () => {
    expect(spec({ type: 'io1', iopsPerGB: '1', allowAutoIOPSPerGBIncrease: 'true', allowautoiopspergbincrease: 'true' }).iops).toBe(100);
  });

  it('legacy fstype twice in different case, even with one value -> error, as the external-provisioner', () => {
    expectParameterError(() => spec({ fstype: 'xfs', FSType: 'xfs' }), 'FSType', /same key as "fstype"/);
  });

  it.each([
    { name: 'TYPE in capitals -> matched', parameters: { TYPE: 'io1', IOPS: '400' }, type: 'io1', iops: 400 },
    { name: 'iopspergb in lower case -> matched', parameters: { Type: 'io2', iopspergb: '10' }, type: 'io2', iops: 100 },
    { name: 'ALLOWAUTOIOPSPERGBINCREASE in capitals -> matched', parameters: { type: 'io1', iopsPerGB: '1', ALLOWAUTOIOPSPERGBINCREASE: 'true' }, type: 'io1', iops: 100 },
  ])('$name', ({ parameters, type, iops }) => {
    const result = spec(parameters);
    expect(result.type).toBe(type);
    expect(result.iops).toBe(iops);
  });

  it.each(IGNORED_PARAMETER_KEYS)('secret reference %s -> ignored, as the external-provisioner strips it', (key) => {
    expect(spec({ [key]: 'some-secret' })).toStrictEqual(spec({}));
  });

  it('secret reference list -> includes the provisioner and node-stage secrets', () => {
    expect(IGNORED_PARAMETER_KEYS).toEqual(
      expect.arrayContaining(['csi.storage.k8s.io/provisioner-secret-name', 'csi.storage.k8s.io/node-stage-secret-namespace']),
    );
    expect(IGNORED_PARAMETER_KEYS).not.toContain('csi.storage.k8s.io/fstype');
  });
});

describe('type', () => {
  it.each([
    { name: 'no type -> gp3', parameters: {}, type: 'gp3' },
    { name: 'no parameters at all -> gp3', parameters: undefined, type: 'gp3' },
    { name: 'empty type -> gp3 (as the driver)', parameters: { type: '' }, type: 'gp3' },
    ...['gp3', 'gp2', 'io1', 'io2', 'standard'].map((type) => ({ name: `${type} -> ${type}`, parameters: { type }, type })),
  ])('$name', ({ parameters, type }) => {
    expect(spec(parameters).type).toBe(type);
  });

  it.each(['st1', 'sc1'])('%s -> %s', (type) => {
    expect(spec({ type }, { requestStorage: '125Gi' }).type).toBe(type);
  });

  it.each(['gp4', 'GP3', 'io3', ' gp3'])('type "%s" -> error naming type', (value) => {
    expectParameterError(() => spec({ type: value }), 'type', /is not an EBS volume type \(gp3, gp2, io1, io2, st1, sc1, standard\)/);
  });
});

describe('encryption', () => {
  it.each([
    { name: 'nothing -> unencrypted', parameters: {}, encrypted: false, kmsKeyId: undefined },
    { name: 'encrypted "true" -> encrypted', parameters: { encrypted: 'true' }, encrypted: true, kmsKeyId: undefined },
    { name: 'encrypted "True" -> not encrypted (only "true" is true)', parameters: { encrypted: 'True' }, encrypted: false, kmsKeyId: undefined },
    { name: 'encrypted "false" -> not encrypted', parameters: { encrypted: 'false' }, encrypted: false, kmsKeyId: undefined },
    { name: 'encrypted "yes" -> not encrypted', parameters: { encrypted: 'yes' }, encrypted: false, kmsKeyId: undefined },
    { name: 'kmsKeyId alone -> encrypted with that key', parameters: { kmsKeyId: 'arn:aws:kms:eu-west-1:111122223333:key/abcd' }, encrypted: true, kmsKeyId: 'arn:aws:kms:eu-west-1:111122223333:key/abcd' },
    { name: 'kmsKeyId with encrypted "false" -> still encrypted', parameters: { encrypted: 'false', kmsKeyId: 'alias/ebs' }, encrypted: true, kmsKeyId: 'alias/ebs' },
    { name: 'empty kmsKeyId -> no key, not encrypted', parameters: { kmsKeyId: '' }, encrypted: false, kmsKeyId: undefined },
  ])('$name', ({ parameters, encrypted, kmsKeyId }) => {
    const result = spec(parameters);
    expect(result.encrypted).toBe(encrypted);
    expect(result.kmsKeyId).toBe(kmsKeyId);
  });
});
