/**
 * A registration's `aws` (issue 23): the EC2 role its cluster's session assumes, the ExternalId,
 * the tag its nodes carry — each refused, naming the field, unless STS and IAM could take it;
 * and a node tag under another key than the deployment's is refused by the registry.
 */
import { describe, expect, it } from 'vitest';
import { createStaticRegistry, nodeTagKeyFrom, parseRegistration, RegistrationError, roleArnAccount, withNodeTagKey } from '../../lib/registry/index.js';

const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const reg = (aws: unknown) => ({ clusterId: 'c7', secrets: [SECRET], region: 'us-east-1', aws });

function refusal(aws: unknown): string {
  try {
    parseRegistration('c7', reg(aws));
  } catch (err) {
    expect(err).toBeInstanceOf(RegistrationError);
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('registration aws', () => {
  it.each([
    ['a role in this account, under /volhook/', 'arn:aws:iam::123456789012:role/volhook/volhook-ec2'],
    ['a role in another partition, nested path', 'arn:aws-us-gov:iam::210987654321:role/volhook/team/a.b@c'],
    ['a role without a path', 'arn:aws-cn:iam::123456789012:role/ec2'],
  ])('%s -> accepted as given', (_name, roleArn) => {
    expect(parseRegistration('c7', reg({ roleArn })).aws).toEqual({ roleArn });
  });

  it.each([
    ['a user, not a role', 'arn:aws:iam::123456789012:user/volhook'],
    ['an 11-digit account', 'arn:aws:iam::12345678901:role/volhook/x'],
    ['an assumed-role session ARN', 'arn:aws:sts::123456789012:assumed-role/volhook-ec2/s'],
    ['a role name', 'volhook-ec2'],
    ['a trailing slash (no name)', 'arn:aws:iam::123456789012:role/volhook/'],
    ['a name over 64 characters', `arn:aws:iam::123456789012:role/${'r'.repeat(65)}`],
  ])('aws.roleArn %s -> refused, the message naming aws.roleArn and the form', (_name, roleArn) => {
    const message = refusal({ roleArn });
    expect(message).toMatch(/^registration of cluster "c7" is malformed:\n✖ aws\.roleArn must be an IAM role ARN, arn:<partition>:iam::<12-digit account>:role\/<path\/><name>\n\s+→ at aws\.roleArn/);
  });

  it('aws.externalId: 2–1224 of [\\w+=,.@:/-]; one character, a space or 1225 refused naming the field', () => {
    expect(parseRegistration('c7', reg({ externalId: 'ab' })).aws).toEqual({ externalId: 'ab' });
    expect(parseRegistration('c7', reg({ externalId: 'x'.repeat(1224) })).aws?.externalId).toHaveLength(1224);
    for (const bad of ['a', 'has space', 'x'.repeat(1225)]) expect(refusal({ externalId: bad })).toMatch(/aws\.externalId must be 2–1224 characters[^]*→ at aws\.externalId/);
  });

  it('aws.nodeTag: key and value, the value a session tag value; anything else refused naming the field', () => {
    expect(parseRegistration('c7', reg({ nodeTag: { key: 'eks:cluster-name', value: 'prod-eks_1' } })).aws).toEqual({ nodeTag: { key: 'eks:cluster-name', value: 'prod-eks_1' } });
    expect(refusal({ nodeTag: { key: 'eks:cluster-name', value: 'a,b' } })).toMatch(/aws\.nodeTag\.value must be 1–256[^]*→ at aws\.nodeTag\.value/);
    expect(refusal({ nodeTag: { key: 'eks:cluster-name', value: '' } })).toMatch(/→ at aws\.nodeTag\.value/);
    expect(refusal({ nodeTag: { key: '', value: 'prod' } })).toMatch(/aws\.nodeTag\.key must not be empty/);
    expect(refusal({ nodeTag: { value: 'prod' } })).toMatch(/→ at aws\.nodeTag\.key/);
  });

  it('unknown fields in aws or aws.nodeTag -> refused by name, never ignored', () => {
    expect(refusal({ roleArn: 'arn:aws:iam::123456789012:role/volhook/x', sessionPolicy: '{}' })).toMatch(/sessionPolicy/);
    expect(refusal({ nodeTag: { key: 'eks:cluster-name', value: 'prod', operator: 'StringLike' } })).toMatch(/operator/);
  });

  it("the account of a role ARN; undefined for what is not one", () => {
    expect(roleArnAccount('arn:aws:iam::123456789012:role/volhook/x')).toBe('123456789012');
    expect(roleArnAccount('arn:aws:iam::123456789012:user/x')).toBeUndefined();
  });
});

describe("the deployment's node tag key", () => {
  const registry = createStaticRegistry([
    reg({ nodeTag: { key: 'eks:cluster-name', value: 'prod' } }),
    { ...reg({ nodeTag: { key: 'karpenter.sh/nodepool', value: 'prod' } }), clusterId: 'c8' },
    { ...reg(undefined), clusterId: 'c9' },
  ]);

  it('VOLHOOK_NODE_TAG_KEY, else eks:cluster-name', () => {
    expect(nodeTagKeyFrom({})).toBe('eks:cluster-name');
    expect(nodeTagKeyFrom({ VOLHOOK_NODE_TAG_KEY: ' ' })).toBe('eks:cluster-name');
    expect(nodeTagKeyFrom({ VOLHOOK_NODE_TAG_KEY: 'karpenter.sh/nodepool' })).toBe('karpenter.sh/nodepool');
  });

  it('a registration naming another key -> RegistrationError naming both keys; control: the same key, and no nodeTag at all, pass', async () => {
    const checked = withNodeTagKey(registry, 'eks:cluster-name');
    await expect(checked.get('c8')).rejects.toThrow(RegistrationError);
    await expect(checked.get('c8')).rejects.toThrow(/aws\.nodeTag\.key "karpenter\.sh\/nodepool".*fences instances by the tag "eks:cluster-name" \(VOLHOOK_NODE_TAG_KEY\)/);
    expect((await checked.get('c7'))?.aws?.nodeTag).toEqual({ key: 'eks:cluster-name', value: 'prod' });
    expect((await checked.get('c9'))?.clusterId).toBe('c9');
    expect(await checked.get('nope')).toBeUndefined();
    expect((await withNodeTagKey(registry, 'karpenter.sh/nodepool').get('c8'))?.clusterId).toBe('c8');
  });
});
