/**
 * StorageClass parameters all the way to EC2: a signed request through the app, and the
 * CreateVolume input the SDK is asked to send (aws-sdk-client-mock), or no call at all.
 */
import { CreateVolumeCommand } from '@aws-sdk/client-ec2';
import { afterEach, describe, expect, it } from 'vitest';
import { ReconcileResponseSchema, type Result } from '../../lib/contract/index.js';
import { FakeEc2 } from '../ec2/fake-ec2.js';
import { appOverFakeEc2, fixtureBody, SECRET_C1, signedRequest } from './harness.js';

let fake: FakeEc2;
afterEach(() => fake.restore());

async function provision(parameters: Record<string, string>, claim: { storage?: string; volumeMode?: string } = {}): Promise<Result> {
  fake = new FakeEc2();
  const app = appOverFakeEc2();
  const body = JSON.parse(fixtureBody);
  const item = body.items[0];
  item.storageClass.parameters = parameters;
  if (claim.storage) item.pvc.spec.resources.requests.storage = claim.storage;
  if (claim.volumeMode) item.pvc.spec.volumeMode = claim.volumeMode;
  const { path, ...init } = signedRequest('/v1/clusters/c1/reconcile', JSON.stringify(body), SECRET_C1);
  const res = await app.request(path, init);
  expect(res.status).toBe(200);
  return ReconcileResponseSchema.parse(await res.json()).results[0]!;
}

const createInputs = () => fake.mock.commandCalls(CreateVolumeCommand).map((c) => c.args[0].input);

describe('StorageClass parameters -> CreateVolume input', () => {
  const cases: Array<[string, Record<string, string>, { storage?: string; volumeMode?: string }, Record<string, unknown>]> = [
    ['no parameters -> gp3, requested size, EC2 default IOPS', {}, {}, { VolumeType: 'gp3', Size: 20, Iops: undefined, Throughput: undefined, Encrypted: false }],
    ['type gp2 -> gp2', { type: 'gp2' }, {}, { VolumeType: 'gp2', Size: 20, Iops: undefined }],
    ['type st1 at 125Gi -> st1', { type: 'st1' }, { storage: '125Gi' }, { VolumeType: 'st1', Size: 125 }],
    ['type standard -> standard', { type: 'standard' }, {}, { VolumeType: 'standard' }],
    ['1Gi + 1 byte -> 2 GiB', {}, { storage: '1073741825' }, { Size: 2 }],
    ['io1 4Gi iopsPerGB 1 with auto-increase -> 100 IOPS', { type: 'io1', iopsPerGB: '1', allowAutoIOPSPerGBIncrease: 'true' }, { storage: '4Gi' }, { VolumeType: 'io1', Size: 4, Iops: 100 }],
    ['io1 4Gi iopsPerGB 10000 -> 200 IOPS', { type: 'io1', iopsPerGB: '10000' }, { storage: '4Gi' }, { VolumeType: 'io1', Iops: 200 }],
    ['io2 4Gi iopsPerGB 10000 -> 4000 IOPS', { type: 'io2', iopsPerGB: '10000' }, { storage: '4Gi' }, { VolumeType: 'io2', Iops: 4000 }],
    ['gp3 10Gi iops 16000 -> 5000 IOPS', { type: 'gp3', iops: '16000' }, { storage: '10Gi' }, { VolumeType: 'gp3', Size: 10, Iops: 5000 }],
    ['gp3 iops 100000 on 100Gi -> 500 per GiB = 50000', { iops: '100000' }, { storage: '100Gi' }, { Iops: 50000 }],
    ['gp3 iops 100000 on 200Gi -> the 80000 maximum', { iops: '100000' }, { storage: '200Gi' }, { Iops: 80000 }],
    ['io2 iops 300000 -> the 256000 maximum', { type: 'io2', iops: '300000' }, { storage: '1000Gi' }, { Iops: 256000 }],
    ['gp3 iops 4000 throughput 250 -> both', { iops: '4000', throughput: '250' }, {}, { Iops: 4000, Throughput: 250 }],
    ['encrypted with kmsKeyId -> both', { encrypted: 'true', kmsKeyId: 'arn:aws:kms:us-east-1:123456789012:key/k1' }, {}, { Encrypted: true, KmsKeyId: 'arn:aws:kms:us-east-1:123456789012:key/k1' }],
    ['kmsKeyId alone -> encrypted', { kmsKeyId: 'alias/k2' }, {}, { Encrypted: true, KmsKeyId: 'alias/k2' }],
    ['encrypted "True" -> not encrypted (only "true" is true)', { encrypted: 'True' }, {}, { Encrypted: false }],
    ['keys in another case -> matched', { TYPE: 'io2', IOPS: '5000' }, { storage: '10Gi' }, { VolumeType: 'io2', Iops: 5000 }],
  ];

  for (const [name, parameters, claim, expected] of cases) {
    it(name, async () => {
      const result = await provision(parameters, claim);
      expect(result.outcome).not.toBe('failed');
      const [input, ...more] = createInputs();
      expect(more).toHaveLength(0);
      expect(input).toMatchObject({ AvailabilityZone: 'us-east-1a', ...Object.fromEntries(Object.entries(expected).filter(([, v]) => v !== undefined)) });
      for (const [key, value] of Object.entries(expected)) if (value === undefined) expect(input?.[key as keyof typeof input], key).toBeUndefined();
    });
  }

  it('tagSpecification_N with templates -> tags in TagSpecifications beside the identity tags', async () => {
    await provision({ tagSpecification_1: 'team=storage', tagSpecification_2: 'owner={{ .PVCNamespace }}/{{ .PVCName }}' });
    const tags = Object.fromEntries((createInputs()[0]?.TagSpecifications?.[0]?.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tags).toMatchObject({
      team: 'storage',
      owner: 'default/data-web-0',
      CSIVolumeName: 'pvc-6f1c2a9e-4b7d-4c1e-9f3a-2d8e5b7c1a04',
      'ebs.csi.aws.com/cluster': 'true',
      'kubernetes.io/cluster/c1': 'owned',
      'volhook.io/cluster': 'c1',
      'kubernetes.io/created-for/pvc/name': 'data-web-0',
      'kubernetes.io/created-for/pvc/namespace': 'default',
      'kubernetes.io/created-for/pv/name': 'pvc-6f1c2a9e-4b7d-4c1e-9f3a-2d8e5b7c1a04',
    });
  });

  it('iopsPerGB and allowAutoIOPSIncreaseOnModify -> the driver\'s IOPSPerGb and AllowAutoIOPSIncreaseOnModify tags', async () => {
    await provision({ type: 'io2', iopsPerGB: '50', allowAutoIOPSIncreaseOnModify: 'true', tagSpecification_1: 'ns={{ .PVCNamespace | toUpper }}' });
    const input = createInputs()[0];
    expect(input).toMatchObject({ VolumeType: 'io2', Size: 20, Iops: 1000 });
    const tags = Object.fromEntries((input?.TagSpecifications?.[0]?.Tags ?? []).map((t) => [t.Key, t.Value]));
    expect(tags).toMatchObject({
      'ebs.csi.aws.com/IOPSPerGb': '50',
      'ebs.csi.aws.com/AllowAutoIOPSIncreaseOnModify': 'true',
      ns: 'DEFAULT',
      CSIVolumeName: 'pvc-6f1c2a9e-4b7d-4c1e-9f3a-2d8e5b7c1a04',
    });
  });

  const refusals: Array<[string, Record<string, string>, { volumeMode?: string }, string]> = [
    ['unknown key', { foo: 'bar' }, {}, 'foo'],
    ['iops with iopsPerGB', { type: 'io2', iops: '1000', iopsPerGB: '10' }, {}, 'iopsPerGB'],
    ['reserved tag key', { tagSpecification_1: 'kubernetes.io/cluster/other=owned' }, {}, 'tagSpecification_1'],
    ['ext4 option with xfs', { 'csi.storage.k8s.io/fstype': 'xfs', ext4BigAlloc: 'true' }, {}, 'ext4BigAlloc'],
    ['filesystem option on a Block claim', { blockSize: '4096' }, { volumeMode: 'Block' }, 'blockSize'],
    ['both fstype keys', { fstype: 'ext4', 'csi.storage.k8s.io/fstype': 'xfs' }, {}, 'fstype'],
    ['io1 iops too low without auto-increase', { type: 'io1', iops: '50' }, {}, 'iops'],
    ['throughput on gp2', { type: 'gp2', throughput: '200' }, {}, 'throughput'],
    ['volumeInitializationRate without a snapshot source', { volumeInitializationRate: '200' }, {}, 'volumeInitializationRate'],
    ['tag template with a disabled function', { tagSpecification_1: 'x={{ .PVCName | html }}' }, {}, 'tagSpecification_1'],
  ];

  for (const [name, parameters, claim, key] of refusals) {
    it(`${name} -> failed naming ${key}, no EC2 call at all`, async () => {
      const result = await provision(parameters, claim);
      expect(result.outcome).toBe('failed');
      expect(result.outcome === 'failed' && result.message).toContain(key);
      expect(fake.mock.calls()).toHaveLength(0);
      // As external-provisioner records a failed Provision call: Provisioning, then the Warning.
      const events = result.writes.filter((w) => w.op === 'createEvent');
      expect(events).toMatchObject([
        { type: 'Normal', reason: 'Provisioning', message: 'External provisioner is provisioning volume for claim "default/data-web-0"' },
        { type: 'Warning', reason: 'ProvisioningFailed' },
      ]);
    });
  }
});
