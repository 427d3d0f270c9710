import { describe, expect, it } from 'vitest';
import {
  matchesAllowedTopologies,
  matchesLabelSelector,
  matchesNodeSelectorTerms,
} from '../../../lib/local/controllers/index.js';
import { nodeObject } from '../../../lib/local/stack/cluster-objects.js';

const labels = { tier: 'fast', zone: 'us-east-1a' };

describe('matchesLabelSelector', () => {
  it.each([
    ['empty selector -> matches', {}, true],
    ['matchLabels equal -> matches', { matchLabels: { tier: 'fast' } }, true],
    ['matchLabels differ -> no match', { matchLabels: { tier: 'slow' } }, false],
    ['In listed -> matches', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['fast', 'x'] }] }, true],
    ['NotIn on absent key -> matches', { matchExpressions: [{ key: 'other', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists on absent key -> no match', { matchExpressions: [{ key: 'other', operator: 'Exists' }] }, false],
    ['DoesNotExist on present key -> no match', { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, false],
    ['unknown operator -> no match', { matchExpressions: [{ key: 'tier', operator: 'Like', values: ['fast'] }] }, false],
  ])('%s', (_name, selector, expected) => {
    expect(matchesLabelSelector(selector, labels)).toBe(expected);
  });
});

describe('matchesNodeSelectorTerms', () => {
  const node = { name: 'n1', labels };
  const zoneIn = (zone: string) => ({ key: 'zone', operator: 'In', values: [zone] });

  it('terms are ORed -> one matching term is enough', () => {
    expect(matchesNodeSelectorTerms([{ matchExpressions: [zoneIn('b')] }, { matchExpressions: [zoneIn('us-east-1a')] }], node)).toBe(true);
  });

  it('expressions are ANDed -> one failing expression fails the term', () => {
    expect(
      matchesNodeSelectorTerms([{ matchExpressions: [zoneIn('us-east-1a'), { key: 'tier', operator: 'NotIn', values: ['fast'] }] }], node),
    ).toBe(false);
  });

  it('no terms, or an empty term -> matches no node', () => {
    expect(matchesNodeSelectorTerms([], node)).toBe(false);
    expect(matchesNodeSelectorTerms([{}], node)).toBe(false);
  });

  it('matchFields on metadata.name -> compares the node name', () => {
    expect(matchesNodeSelectorTerms([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }], node)).toBe(true);
    expect(matchesNodeSelectorTerms([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }], node)).toBe(false);
  });

  it('Gt/Lt -> compare integers', () => {
    const n = { name: 'n', labels: { cores: '8' } };
    expect(matchesNodeSelectorTerms([{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['4'] }] }], n)).toBe(true);
    expect(matchesNodeSelectorTerms([{ matchExpressions: [{ key: 'cores', operator: 'Lt', values: ['4'] }] }], n)).toBe(false);
  });
});

describe('matchesAllowedTopologies', () => {
  const terms = [{ matchLabelExpressions: [{ key: 'zone', values: ['us-east-1b', 'us-east-1a'] }] }];

  it('no allowedTopologies -> anywhere', () => {
    expect(matchesAllowedTopologies(undefined, {})).toBe(true);
  });

  it('node label among the values -> allowed', () => {
    expect(matchesAllowedTopologies(terms, labels)).toBe(true);
  });

  it('node label outside the values, or missing -> refused', () => {
    expect(matchesAllowedTopologies(terms, { zone: 'us-east-1c' })).toBe(false);
    expect(matchesAllowedTopologies(terms, {})).toBe(false);
  });

  it('the local nodes carry their zone ID as EKS nodes do -> a zone-id class places only on the node in that zone', () => {
    const nodes = [
      { name: 'a', zone: 'us-east-1a', zoneId: 'use1-az1', instanceId: 'i-0aaaaaaaaaaaaaaa1' },
      { name: 'b', zone: 'us-east-1b', zoneId: 'use1-az2', instanceId: 'i-0aaaaaaaaaaaaaaa2' },
    ].map((n) => nodeObject(n, 'us-east-1'));
    expect(nodes.map((n) => n.metadata.labels['topology.k8s.aws/zone-id'])).toEqual(['use1-az1', 'use1-az2']);
    const byId = [{ matchLabelExpressions: [{ key: 'topology.k8s.aws/zone-id', values: ['use1-az2'] }] }];
    expect(nodes.filter((n) => matchesAllowedTopologies(byId, n.metadata.labels)).map((n) => n.metadata.name)).toEqual(['b']);
  });
});
