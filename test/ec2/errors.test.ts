import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_PER_VOLUME_INTERVAL_SECONDS } from '../../lib/ec2/errors.js';
import { classifyEc2Error, Ec2Error, type Ec2ErrorKind } from '../../lib/ec2/index.js';
import { verdictForEc2Error } from '../../lib/reconcile/outcomes.js';
import { ec2Error } from './fake-ec2.js';

const codes: Array<[code: string, kind: Ec2ErrorKind, status?: number]> = [
  ['RequestLimitExceeded', 'transient', 503],
  ['Throttling', 'transient'],
  ['InternalError', 'transient', 500],
  ['Unavailable', 'transient', 503],
  ['ServiceUnavailable', 'transient', 503],
  ['InvalidParameterValue', 'invalidParameter'],
  ['InvalidParameterCombination', 'invalidParameter'],
  ['InvalidParameter', 'invalidParameter'],
  ['MissingParameter', 'invalidParameter'],
  ['UnknownVolumeType', 'invalidParameter'],
  ['InvalidVolume.NotFound', 'notFound'],
  ['InvalidInstanceID.NotFound', 'notFound'],
  ['InvalidAttachment.NotFound', 'notFound'],
  ['InvalidVolumeID.Malformed', 'notFound'],
  ['InvalidInstanceID.Malformed', 'notFound'],
  ['VolumeInUse', 'inUse'],
  ['IncorrectState', 'incorrectState'],
  ['IncorrectInstanceState', 'incorrectState'],
  ['InsufficientVolumeCapacity', 'capacity'],
  ['AttachmentLimitExceeded', 'attachmentLimit'],
  ['InvalidVolume.ZoneMismatch', 'zoneMismatch'],
  ['IdempotentParameterMismatch', 'idempotentMismatch'],
  ['VolumeLimitExceeded', 'volumeLimit'],
  ['UnauthorizedOperation', 'unauthorized', 403],
  ['InvalidSnapshot.NotFound', 'notFound'],
  ['InvalidSnapshotID.Malformed', 'notFound'],
  ['InvalidSnapshot.InUse', 'inUse'],
  ['SnapshotLimitExceeded', 'other'],
  ['SnapshotCreationPerVolumeRateExceeded', 'transient', 400],
  ['SomethingNew', 'other'],
  ['SomethingNewOnTheServer', 'transient', 502],
];

describe('classifyEc2Error', () => {
  it.each(codes)('%s -> %s', (code, kind, status) => {
    const err = classifyEc2Error(ec2Error(code, `message of ${code}`, status), 'AttachVolume');
    expect(err).toBeInstanceOf(Ec2Error);
    expect(err).toMatchObject({ kind, code, action: 'AttachVolume' });
    expect(err.message).toContain(`message of ${code}`);
    expect(err.cause).toBeDefined();
  });

  it('SnapshotCreationPerVolumeRateExceeded -> transient, tried again after the 15 s EC2 asks for: a requeue, not a failure; a throttle carries no such wait (control)', () => {
    const err = classifyEc2Error(ec2Error('SnapshotCreationPerVolumeRateExceeded', 'Wait at least 15 seconds between concurrent volume snapshots.', 400), 'CreateSnapshots');
    expect(err).toMatchObject({ kind: 'transient', retryAfterSeconds: 15 });
    expect(verdictForEc2Error(err, 'createSnapshots')).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 15 });
    expect(classifyEc2Error(ec2Error('RequestLimitExceeded', 'Request limit exceeded.', 503)).retryAfterSeconds).toBeUndefined();
  });

  it('docs/snapshots.md states the wait the classifier gives SnapshotCreationPerVolumeRateExceeded', () => {
    const doc = readFileSync(new URL('../../docs/snapshots.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(doc).toContain(`\`SnapshotCreationPerVolumeRateExceeded\`, which is tried again ${SNAPSHOT_PER_VOLUME_INTERVAL_SECONDS} s later, not recorded as an error`);
  });

  it('"Attachment point … is already in use" -> deviceInUse, not invalidParameter', () => {
    const err = classifyEc2Error(
      ec2Error('InvalidParameterValue', "Invalid value '/dev/xvdaa' for unixDevice. Attachment point /dev/xvdaa is already in use"),
    );
    expect(err.kind).toBe('deviceInUse');
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN'])('network error %s -> transient', (code) => {
    const err = classifyEc2Error(Object.assign(new Error(`connect ${code} 10.0.0.1:443`), { code }));
    expect(err).toMatchObject({ kind: 'transient', code });
  });

  it.each(['TimeoutError', 'AbortError'])('%s from the HTTP handler -> transient', (name) => {
    const err = classifyEc2Error(Object.assign(new Error('request aborted'), { name }));
    expect(err).toMatchObject({ kind: 'transient', code: name });
  });

  it('UnauthorizedOperation -> the message names the action the role may not call', () => {
    const err = classifyEc2Error(ec2Error('UnauthorizedOperation', 'You are not authorized to perform this operation.', 403), 'CreateVolume');
    expect(err.message).toContain('ec2:CreateVolume');
  });

  it('an Ec2Error -> passed through unchanged', () => {
    const original = new Ec2Error('capacity', 'InsufficientVolumeCapacity', 'x');
    expect(classifyEc2Error(original)).toBe(original);
  });

  it('a non-error value -> other', () => {
    expect(classifyEc2Error('boom')).toMatchObject({ kind: 'other', message: 'EC2: Unknown: boom' });
  });
});
