import { describe, expect, it } from 'vitest';
import { StorageClassSchema } from '../../lib/contract/index.js';
import { allowedTopologyZones, stableIndex } from '../../lib/reconcile/zone.js';
import { storageClass } from './fixtures.js';

const withTopologies = (allowedTopologies: unknown) => StorageClassSchema.parse(storageClass({ allowedTopologies }));
const term = (...expressions: Array<[string, string[]]>) => ({ matchLabelExpressions: expressions.map(([key, values]) => ({ key, values })) });

describe('allowedTopologyZones', () => {
  it.each([
    ['no allowedTopologies (any zone)', undefined, undefined],
    ['one term, well-known key', [term(['topology.kubernetes.io/zone', ['us-east-1b', 'us-east-1a']])], ['us-east-1a', 'us-east-1b']],
    ['terms under both keys', [term(['topology.ebs.csi.aws.com/zone', ['us-east-1c']]), term(['topology.kubernetes.io/zone', ['us-east-1a']])], ['us-east-1a', 'us-east-1c']],
    ['both keys in one term', [term(['topology.kubernetes.io/zone', ['us-east-1a', 'us-east-1b']], ['topology.ebs.csi.aws.com/zone', ['us-east-1b']])], ['us-east-1b']],
    ['a term without a zone key (any zone)', [term(['topology.kubernetes.io/zone', ['us-east-1a']]), term(['topology.kubernetes.io/region', ['us-east-1']])], undefined],
  ])('%s -> its zones', (_name, topologies, expected) => {
    expect(allowedTopologyZones(withTopologies(topologies))).toEqual(expected);
  });
});

describe('stableIndex', () => {
  it('same key -> same index; many keys -> every index used', () => {
    expect(stableIndex('uid-1', 3)).toBe(stableIndex('uid-1', 3));
    const used = new Set(Array.from({ length: 60 }, (_, i) => stableIndex(`uid-${i}`, 3)));
    expect([...used].sort()).toEqual([0, 1, 2]);
  });
});
