import { describe, expect, it } from 'vitest';
import { classifyEc2Error, Ec2Error, type Ec2ErrorKind } from '../../lib/ec2/index.js';
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
