/** The evaluator's remembered decisions never stand in for a request that could be decided otherwise. */
import { describe, expect, it } from 'vitest';
import { authorizer, type IamPrincipal } from '../../lib/iam/evaluate.js';
import type { PolicyDocument } from '../../lib/iam/policy.js';

const volume = (id: string) => `arn:aws:ec2:us-east-1:123456789012:volume/${id}`;
const principal = (document: PolicyDocument): IamPrincipal => ({ arn: 'arn:aws:sts::123456789012:assumed-role/r/s', accountId: '123456789012', policies: [{ name: 'p', document }] });

describe('authorizer', () => {
  it('a policy scoped by tags: the same decision for every volume with the same tags, another for other tags', async () => {
    const authorize = authorizer(principal({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'ec2:DeleteVolume', Resource: volume('*'), Condition: { StringEquals: { 'aws:ResourceTag/team': 'blue' } } }] }));
    const ask = (id: string, team: string) => authorize([{ action: 'ec2:DeleteVolume', resource: volume(id), context: { 'aws:ResourceTag/team': team, 'ec2:VolumeID': id } }]);
    expect(await ask('vol-1', 'blue')).toEqual({ allowed: true });
    expect(await ask('vol-2', 'blue')).toEqual({ allowed: true });
    expect(await ask('vol-3', 'red')).toMatchObject({ allowed: false, result: 'ImplicitlyDenied', request: { resource: volume('vol-3') } });
    expect(await ask('vol-4', 'blue')).toEqual({ allowed: true });
  });

  it('a policy naming one volume: decided per volume', async () => {
    const authorize = authorizer(principal({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'ec2:DeleteVolume', Resource: volume('vol-1') }] }));
    const ask = (id: string) => authorize([{ action: 'ec2:DeleteVolume', resource: volume(id), context: {} }]);
    expect(await ask('vol-1')).toEqual({ allowed: true });
    expect(await ask('vol-2')).toMatchObject({ allowed: false });
  });

  it('a policy reading a context key through a variable: decided per value of that key', async () => {
    const authorize = authorizer(principal({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'ec2:DeleteVolume', Resource: volume('*'), Condition: { StringEquals: { 'aws:ResourceTag/owner': '${aws:PrincipalTag/team}' } } }] }));
    const ask = (team: string) => authorize([{ action: 'ec2:DeleteVolume', resource: volume('vol-1'), context: { 'aws:ResourceTag/owner': 'blue', 'aws:PrincipalTag/team': team } }]);
    expect(await ask('blue')).toEqual({ allowed: true });
    expect(await ask('red')).toMatchObject({ allowed: false });
  });
});
