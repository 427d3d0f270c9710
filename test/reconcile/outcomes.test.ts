import { describe, expect, it } from 'vitest';
import { Ec2Error, type Ec2ErrorKind } from '../../lib/ec2/types.js';
import { verdictForEc2Error, verdictForError } from '../../lib/reconcile/outcomes.js';
import { ec2Error } from './fake-gateway.js';

describe('verdictForEc2Error', () => {
  it.each<[Ec2ErrorKind, 'attachDisk' | 'deleteDisk' | 'createDisk', string, string?]>([
    ['transient', 'createDisk', 'requeue'],
    ['transient', 'attachDisk', 'requeue'],
    ['incorrectState', 'deleteDisk', 'requeue'],
    ['deviceInUse', 'attachDisk', 'requeue'],
    ['inUse', 'deleteDisk', 'requeue'],
    ['inUse', 'attachDisk', 'failed', 'VolumeInUse'],
    ['invalidParameter', 'createDisk', 'failed', 'InvalidParameter'],
    ['capacity', 'createDisk', 'failed', 'InsufficientVolumeCapacity'],
    ['attachmentLimit', 'attachDisk', 'failed', 'AttachmentLimitExceeded'],
    ['notFound', 'attachDisk', 'failed', 'NotFound'],
    ['zoneMismatch', 'attachDisk', 'failed', 'ZoneMismatch'],
    ['idempotentMismatch', 'createDisk', 'failed', 'IdempotentParameterMismatch'],
    ['volumeLimit', 'createDisk', 'failed', 'VolumeLimitExceeded'],
    ['unauthorized', 'attachDisk', 'failed', 'UnauthorizedOperation'],
    ['other', 'createDisk', 'failed', 'SomethingNew'],
  ])('%s on %s -> %s', (kind, verb, outcome, reason) => {
    const verdict = verdictForEc2Error(ec2Error(kind, kind === 'other' ? 'SomethingNew' : kind), verb);
    expect(verdict.outcome).toBe(outcome);
    if (verdict.outcome === 'failed') {
      expect(verdict.reason).toBe(reason);
      expect(verdict.requeueAfterSeconds).toBeGreaterThanOrEqual(60);
      expect(verdict.requeueAfterSeconds).toBeLessThanOrEqual(300);
    }
  });

  it.each<[string, string, number]>([
    ['throttled', 'RequestLimitExceeded', 5],
    ['a 5xx', 'InternalError', 1],
    ['unavailable', 'Unavailable', 1],
    ['the answer lost', 'ECONNRESET', 1],
    ['no answer by the deadline', 'DeadlineExceeded', 1],
  ])('transient, %s (%s) -> requeue after %i s', (_case, code, seconds) => {
    expect(verdictForEc2Error(ec2Error('transient', code), 'attachDisk')).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: seconds });
  });

  it('transient with the budget\'s wait -> that wait, whatever the code', () => {
    const refused = new Ec2Error('transient', 'RateBudgetExhausted', 'no token now', 'CreateVolume', 4.2);
    expect(verdictForEc2Error(refused, 'createDisk')).toMatchObject({ outcome: 'requeue', requeueAfterSeconds: 4.2 });
  });

  it('unauthorized -> the message names the permission', () => {
    const verdict = verdictForEc2Error(ec2Error('unauthorized', 'UnauthorizedOperation', 'You are not authorized'), 'attachDisk');
    expect(verdict.outcome === 'failed' && verdict.message).toMatch(/^ec2:AttachVolume is not allowed: /);
  });

  it('a plain Error -> requeue naming it', () => {
    expect(verdictForError(new Error('socket hang up'))).toEqual({
      outcome: 'requeue',
      requeueAfterSeconds: 10,
      message: 'unexpected error: socket hang up',
    });
  });
});
