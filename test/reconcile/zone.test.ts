import { describe, expect, it } from 'vitest';
import { StorageClassSchema } from '../../lib/contract/index.js';
import { chooseZone, readPlacement, stableIndex, termZones, type Placement, type ZoneChoice } from '../../lib/reconcile/zone.js';
import { FAKE_ZONES } from './fake-gateway.js';
import { claimItem, node, storageClass } from './fixtures.js';

const withTopologies = (allowedTopologies: unknown, override: object = {}) =>
  StorageClassSchema.parse(storageClass({ allowedTopologies, ...override }));
const term = (...expressions: Array<[string, string[]]>) => ({ matchLabelExpressions: expressions.map(([key, values]) => ({ key, values })) });

const ZONE = 'topology.kubernetes.io/zone';
const EBS_ZONE = 'topology.ebs.csi.aws.com/zone';
const BETA_ZONE = 'failure-domain.beta.kubernetes.io/zone';
const ZONE_ID = 'topology.k8s.aws/zone-id';
/** The fake Region (FAKE_ZONES): us-east-1a use1-az6, 1b use1-az1, 1c use1-az2, 1d use1-az4. */
const REGION = FAKE_ZONES;

describe('readPlacement: every topology key a class may use', () => {
  it.each<[string, unknown, Placement]>([
    ['no allowedTopologies -> any zone', undefined, { kind: 'any' }],
    ['empty allowedTopologies -> any zone', [], { kind: 'any' }],
    ['topology.kubernetes.io/zone -> its zones', [term([ZONE, ['us-east-1b', 'us-east-1a']])], { kind: 'terms', terms: [{ names: ['us-east-1b', 'us-east-1a'] }] }],
    ['topology.ebs.csi.aws.com/zone -> its zones', [term([EBS_ZONE, ['us-east-1c']])], { kind: 'terms', terms: [{ names: ['us-east-1c'] }] }],
    ['failure-domain.beta.kubernetes.io/zone -> its zones', [term([BETA_ZONE, ['us-east-1d']])], { kind: 'terms', terms: [{ names: ['us-east-1d'] }] }],
    ['topology.k8s.aws/zone-id -> its zone IDs', [term([ZONE_ID, ['use1-az6']])], { kind: 'terms', terms: [{ ids: ['use1-az6'] }] }],
    ['two zone keys in one term -> the zones both allow', [term([ZONE, ['us-east-1a', 'us-east-1b']], [EBS_ZONE, ['us-east-1b']])], { kind: 'terms', terms: [{ names: ['us-east-1b'] }] }],
    ['zone and zone ID in one term -> both kept, to be intersected', [term([ZONE, ['us-east-1a']], [ZONE_ID, ['use1-az6', 'use1-az1']])],
      { kind: 'terms', terms: [{ names: ['us-east-1a'], ids: ['use1-az6', 'use1-az1'] }] }],
    ['one term per key -> alternatives', [term([EBS_ZONE, ['us-east-1c']]), term([ZONE_ID, ['use1-az1']])], { kind: 'terms', terms: [{ names: ['us-east-1c'] }, { ids: ['use1-az1'] }] }],
    ['a term without expressions -> allows no zone (an empty term matches nothing)', [{ matchLabelExpressions: [] }], { kind: 'terms', terms: [{}] }],
  ])('%s', (_name, topologies, expected) => {
    expect(readPlacement(withTopologies(topologies))).toEqual(expected);
  });

  it.each([
    ['kubernetes.io/hostname', [term(['kubernetes.io/hostname', ['ip-10-0-1-23']])]],
    ['topology.kubernetes.io/region', [term([ZONE, ['us-east-1a']]), term(['topology.kubernetes.io/region', ['us-east-1']])]],
    ['kubernetes.io/os', [term(['kubernetes.io/os', ['linux']])]],
    ['example.com/rack', [term([ZONE, ['us-east-1a']], ['example.com/rack', ['r1']])]],
    ['topology.k8s.aws/zone', [term(['topology.k8s.aws/zone', ['us-east-1a']])]],
  ])('unknown key %s, alone or beside a zone key -> refused naming it, never "any zone"', (key, topologies) => {
    const placement = readPlacement(withTopologies(topologies));
    expect(placement).toMatchObject({ kind: 'unsupported', reason: 'UnsupportedTopologyKey' });
    expect(placement.kind === 'unsupported' && placement.message).toContain(`"${key}"`);
  });

  it.each([
    ['topology.ebs.csi.aws.com/outpost-id', { allowedTopologies: [term(['topology.ebs.csi.aws.com/outpost-id', ['op-0123456789abcdef0']])] }, 'allowedTopologies key "topology.ebs.csi.aws.com/outpost-id"'],
    ['topology.ebs.csi.aws.com/region', { allowedTopologies: [term([ZONE, ['us-east-1a']], ['topology.ebs.csi.aws.com/region', ['us-east-1']])] }, '"topology.ebs.csi.aws.com/region"'],
    ['topology.ebs.csi.aws.com/partition', { allowedTopologies: [term(['topology.ebs.csi.aws.com/partition', ['aws']])] }, '"topology.ebs.csi.aws.com/partition"'],
    ['topology.ebs.csi.aws.com/account-id', { allowedTopologies: [term(['topology.ebs.csi.aws.com/account-id', ['123456789012']])] }, '"topology.ebs.csi.aws.com/account-id"'],
    ['parameter outpostArn', { parameters: { type: 'gp2', outpostArn: 'arn:aws:outposts:us-east-1:123456789012:outpost/op-0123456789abcdef0' } }, 'parameter "outpostArn"'],
    ['parameter OUTPOSTARN (keys are case-insensitive)', { parameters: { OUTPOSTARN: 'arn:aws:outposts:us-east-1:123456789012:outpost/op-0' } }, 'parameter "OUTPOSTARN"'],
  ])('Outposts: %s -> refused by name', (_name, override, named) => {
    const placement = readPlacement(StorageClassSchema.parse(storageClass(override)));
    expect(placement).toMatchObject({ kind: 'unsupported', reason: 'OutpostNotSupported' });
    expect(placement.kind === 'unsupported' && placement.message).toContain(named);
    expect(placement.kind === 'unsupported' && placement.message).toContain('Outpost');
  });
});

describe('termZones: zone IDs become the names of the Region', () => {
  it.each<[string, Parameters<typeof termZones>[0], { zones: string[]; unknownIds: string[] }]>([
    ['names only', [{ names: ['us-east-1b', 'us-east-1a'] }], { zones: ['us-east-1a', 'us-east-1b'], unknownIds: [] }],
    ['an ID -> the zone with that ID, not the one its digit suggests', [{ ids: ['use1-az1'] }], { zones: ['us-east-1b'], unknownIds: [] }],
    ['IDs and names in separate terms -> all of them', [{ ids: ['use1-az6', 'use1-az4'] }, { names: ['us-east-1c'] }], { zones: ['us-east-1a', 'us-east-1c', 'us-east-1d'], unknownIds: [] }],
    ['name and ID in one term -> the zones both allow', [{ names: ['us-east-1a', 'us-east-1b'], ids: ['use1-az1', 'use1-az2'] }], { zones: ['us-east-1b'], unknownIds: [] }],
    ['name and ID in one term naming different zones -> none', [{ names: ['us-east-1a'], ids: ['use1-az1'] }], { zones: [], unknownIds: [] }],
    ['an ID the Region does not have -> reported, no zone', [{ ids: ['use1-az3'] }], { zones: [], unknownIds: ['use1-az3'] }],
    ['a known and an unknown ID -> the known one, the other reported', [{ ids: ['use1-az9', 'use1-az2'] }], { zones: ['us-east-1c'], unknownIds: ['use1-az9'] }],
    ['an empty term -> no zone', [{}], { zones: [], unknownIds: [] }],
  ])('%s', (_name, terms, expected) => {
    expect(termZones(terms, REGION)).toEqual(expected);
  });
});

describe('chooseZone: keys, zone IDs and nodes -> the zone', () => {
  const immediate = (topologies: unknown) => claimItem({ clusterZones: ['us-east-1a', 'us-east-1b', 'us-east-1c'], storageClass: { allowedTopologies: topologies } });
  const wffc = (selected: unknown, topologies?: unknown) =>
    claimItem({
      pvc: { metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'ip-10-0-1-23.ec2.internal' } } },
      storageClass: { volumeBindingMode: 'WaitForFirstConsumer', ...(topologies ? { allowedTopologies: topologies } : {}) },
      selectedNode: selected,
      clusterZones: [],
    });
  const choose = (item: ReturnType<typeof claimItem>, regionZones?: typeof REGION, allowedZones: string[] = []) =>
    chooseZone(item, item.storageClass!, allowedZones, regionZones);

  it.each<[string, ReturnType<typeof claimItem>, ZoneChoice | { kind: 'none' }]>([
    ['Immediate, zone-id class -> the zone with that ID', immediate([term([ZONE_ID, ['use1-az4']])]), { kind: 'zone', zone: 'us-east-1d' }],
    ['Immediate, beta zone key -> its zone', immediate([term([BETA_ZONE, ['us-east-1c']])]), { kind: 'zone', zone: 'us-east-1c' }],
    ['Immediate, zone and zone ID of one zone in one term -> that zone', immediate([term([EBS_ZONE, ['us-east-1a', 'us-east-1b']], [ZONE_ID, ['use1-az6']])]), { kind: 'zone', zone: 'us-east-1a' }],
    ['WaitForFirstConsumer, node in the zone of the class\'s zone ID -> the node\'s zone', wffc(node(), [term([ZONE_ID, ['use1-az6']])]), { kind: 'zone', zone: 'us-east-1a' }],
    ['WaitForFirstConsumer, node outside the class\'s zone ID -> none', wffc(node(), [term([ZONE_ID, ['use1-az1']])]), { kind: 'none' }],
    ['WaitForFirstConsumer, node with only the beta zone label -> its zone',
      wffc(node({ labels: { 'topology.kubernetes.io/zone': undefined, [BETA_ZONE]: 'us-east-1c' }, providerID: undefined })), { kind: 'zone', zone: 'us-east-1c' }],
    ['WaitForFirstConsumer, node with only a zone-id label -> the zone with that ID',
      wffc(node({ labels: { 'topology.kubernetes.io/zone': undefined, [ZONE_ID]: 'use1-az2' }, providerID: undefined })), { kind: 'zone', zone: 'us-east-1c' }],
    ['WaitForFirstConsumer, node with a zone label and a zone-id label -> the zone label (no look-up)',
      wffc(node({ labels: { [ZONE_ID]: 'use1-az6' } })), { kind: 'zone', zone: 'us-east-1a' }],
  ])('%s', (_name, item, expected) => {
    const choice = choose(item, REGION);
    if (expected.kind === 'none') expect(choice.kind).toBe('none');
    else expect(choice).toEqual(expected);
  });

  it.each([
    ['Immediate, zone-id class', immediate([term([ZONE_ID, ['use1-az4']])])],
    ['WaitForFirstConsumer, zone-id class', wffc(node(), [term([ZONE_ID, ['use1-az6']])])],
    ['WaitForFirstConsumer, node with only a zone-id label', wffc(node({ labels: { 'topology.kubernetes.io/zone': undefined, [ZONE_ID]: 'use1-az2' }, providerID: undefined }))],
  ])('%s, without the Region\'s zones -> needZones', (_name, item) => {
    expect(choose(item)).toEqual({ kind: 'needZones' });
  });

  it.each([
    ['Immediate, zone-name class', immediate([term([ZONE, ['us-east-1b']])])],
    ['WaitForFirstConsumer, node with a zone label and a zone-id label', wffc(node({ labels: { [ZONE_ID]: 'use1-az6' } }))],
  ])('%s -> chosen without the Region\'s zones', (_name, item) => {
    expect(choose(item).kind).toBe('zone');
  });

  it('Immediate, a zone ID the Region does not have -> none, naming the ID and the zones the Region has', () => {
    const choice = choose(immediate([term([ZONE_ID, ['use1-az3']])]), REGION);
    expect(choice.kind).toBe('none');
    const message = choice.kind === 'none' ? choice.message : '';
    expect(message).toContain('use1-az3');
    expect(message).toContain('use1-az6 (us-east-1a)');
  });

  it('WaitForFirstConsumer, node with only an unknown zone-id label -> none naming it', () => {
    const choice = choose(wffc(node({ labels: { 'topology.kubernetes.io/zone': undefined, [ZONE_ID]: 'use1-az3' }, providerID: undefined })), REGION);
    expect(choice).toMatchObject({ kind: 'none', message: expect.stringContaining('use1-az3') });
  });

  it('Immediate, zone-id class and registration allowedZones -> only zones both allow', () => {
    const item = immediate([term([ZONE_ID, ['use1-az6', 'use1-az1']])]);
    expect(choose(item, REGION, ['us-east-1b'])).toEqual({ kind: 'zone', zone: 'us-east-1b' });
    expect(choose(item, REGION, ['us-east-1c'])).toMatchObject({ kind: 'none', message: expect.stringContaining('[us-east-1a, us-east-1b]') });
  });

  it('an unknown key or an Outpost -> unsupported, before any node or zone look-up', () => {
    expect(choose(wffc(null, [term(['kubernetes.io/hostname', ['n1']])]))).toMatchObject({ kind: 'unsupported', reason: 'UnsupportedTopologyKey' });
    expect(choose(immediate([term([ZONE_ID, ['use1-az6']], ['topology.ebs.csi.aws.com/outpost-id', ['op-1']])]))).toMatchObject({ kind: 'unsupported', reason: 'OutpostNotSupported' });
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
