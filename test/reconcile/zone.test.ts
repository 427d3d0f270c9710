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
    // Known values, computed once (first 32 bits of SHA-256, big-endian, mod n; e.g.
    // `printf uid-1 | sha256sum` starts 4a49acf8 = 1246342392). They must never change:
    // every function instance, in any process and of any deployed version, has to pick the
    // same zone for the same claim on every retry, so the hash is part of the contract.
    const pinned: Array<[string, number, number]> = [
      ['uid-1', 3, 0],
      ['uid-2', 3, 0],
      ['uid-3', 3, 2],
      ['uid-7', 3, 2],
      ['uid-8', 3, 2],
      ['uid-9', 3, 1],
      ['6f1c2a9e-4b7d-4c1e-9f3a-2d8e5b7c1a04', 2, 0],
      ['6f1c2a9e-4b7d-4c1e-9f3a-2d8e5b7c1a04', 3, 2],
      ['6f1c2a9e-4b7d-4c1e-9f3a-2d8e5b7c1a04', 6, 2],
      ['00000000-0000-4000-8000-000000000002', 6, 3],
      ['uid-1', 2 ** 32, 1246342392],
      ['6f1c2a9e-4b7d-4c1e-9f3a-2d8e5b7c1a04', 2 ** 32, 1798914728],
      ['', 2 ** 32, 3820012610],
    ];
    expect(pinned.map(([key, n]) => [key, n, stableIndex(key, n)])).toEqual(pinned);
    const used = new Set(Array.from({ length: 60 }, (_, i) => stableIndex(`uid-${i}`, 3)));
    expect([...used].sort()).toEqual([0, 1, 2]);
  });
});
