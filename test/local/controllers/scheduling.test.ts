import { describe, expect, it } from 'vitest';
import { needsScheduling, schedulePod } from '../../../lib/local/controllers/index.js';
import type { PersistentVolumeClaim, SchedulingInput } from '../../../lib/local/controllers/index.js';
import { boundPair, claim, node, pod, storageClass, volume } from './fixtures.js';

const SELECTED = 'volume.kubernetes.io/selected-node';
const wffc = storageClass('wffc', { waitForFirstConsumer: true, zones: ['us-east-1b'] });
const immediate = storageClass('gp3');
const nodes = [node('node-a', { zone: 'us-east-1a' }), node('node-b', { zone: 'us-east-1b' }), node('node-c', { zone: 'us-east-1b' })];

function input(claims: PersistentVolumeClaim[], more: Partial<SchedulingInput> = {}): SchedulingInput {
  return {
    pod: pod('p', { claims: claims.map((c) => c.metadata.name) }),
    claims: new Map(claims.map((c) => [c.metadata.name, c])),
    volumes: [],
    classes: [wffc, immediate],
    nodes,
    podsPerNode: new Map(),
    ...more,
  };
}

describe('needsScheduling', () => {
  it.each([
    ['pending pod without node -> scheduled', pod('p'), true],
    ['pod with a node -> left alone', pod('p', { nodeName: 'n' }), false],
    ['pod being deleted -> left alone', pod('p', { deleting: true }), false],
    ['pod for another scheduler -> left alone', { ...pod('p'), spec: { ...pod('p').spec, schedulerName: 'other' } }, false],
  ])('%s', (_name, p, expected) => {
    expect(needsScheduling(p)).toBe(expected);
  });
});

describe('schedulePod', () => {
  it('pod without volumes -> bound to the node with fewest pods', () => {
    const decision = schedulePod(input([], { podsPerNode: new Map([['node-a', 2], ['node-b', 1], ['node-c', 1]]) }));
    expect(decision).toEqual({ action: 'bind', node: 'node-b' });
  });

  it('node at its volume limit -> skipped for a pod with a volume', () => {
    const decision = schedulePod(
      input([claim('c', { className: 'wffc' })], {
        volumesPerNode: new Map([['node-b', 26]]),
        volumeLimits: new Map([['node-b', 26], ['node-c', 26]]),
        podsPerNode: new Map([['node-b', 0], ['node-c', 9]]),
      }),
    );
    expect(decision).toEqual({ action: 'selectNode', node: 'node-c', claims: ['c'] });
  });

  it('every node at its volume limit -> unschedulable, saying why', () => {
    const full = new Map(nodes.map((n) => [n.metadata.name, 2]));
    const decision = schedulePod(input([claim('c', { className: 'wffc' })], { volumesPerNode: full, volumeLimits: full }));
    expect(decision).toMatchObject({ action: 'unschedulable', message: expect.stringContaining('3 node(s) exceed max volume count') });
  });

  it('not ready and cordoned nodes -> skipped', () => {
    const decision = schedulePod(
      input([], { nodes: [node('node-a', { ready: false }), node('node-b', { unschedulable: true }), node('node-c')] }),
    );
    expect(decision).toEqual({ action: 'bind', node: 'node-c' });
  });

  it('no node fits -> unschedulable with the reasons counted', () => {
    const decision = schedulePod(input([], { nodes: [node('a', { ready: false }), node('b', { ready: false }), node('c', { unschedulable: true })] }));
    expect(decision).toEqual({
      action: 'unschedulable',
      message: '0/3 nodes are available: 2 node(s) were not ready, 1 node(s) were unschedulable.',
    });
  });

  it('a claim does not exist yet -> wait', () => {
    const decision = schedulePod({ ...input([]), pod: pod('p', { claims: ['missing'] }) });
    expect(decision).toMatchObject({ action: 'wait', reason: 'persistentvolumeclaim "missing" not found' });
  });

  it('unbound Immediate claim -> wait for the PV controller', () => {
    expect(schedulePod(input([claim('c', { className: 'gp3' })]))).toMatchObject({ action: 'wait' });
  });

  it('bound PV with nodeAffinity -> only a node inside it', () => {
    const { claim: c, volume: v } = boundPair('c', { zone: 'us-east-1a' });
    const decision = schedulePod(input([c], { volumes: [v], podsPerNode: new Map([['node-a', 5]]) }));
    expect(decision).toEqual({ action: 'bind', node: 'node-a' });
  });

  it('bound PV reachable from no ready node -> unschedulable, volume node affinity conflict', () => {
    const { claim: c, volume: v } = boundPair('c', { zone: 'us-east-1z' });
    const decision = schedulePod(input([c], { volumes: [v] }));
    expect(decision).toEqual({ action: 'unschedulable', message: '0/3 nodes are available: 3 node(s) had volume node affinity conflict.' });
  });

  it('claim has volumeName but is not Bound yet -> wait', () => {
    const { claim: c, volume: v } = boundPair('c');
    c.status = { phase: 'Pending' };
    expect(schedulePod(input([c], { volumes: [v] }))).toMatchObject({ action: 'wait' });
  });

  it('unbound WaitForFirstConsumer claim -> selected-node on a node inside allowedTopologies', () => {
    const decision = schedulePod(input([claim('c', { className: 'wffc' })], { podsPerNode: new Map([['node-b', 3]]) }));
    expect(decision).toEqual({ action: 'selectNode', node: 'node-c', claims: ['c'] });
  });

  it('WaitForFirstConsumer claim with no allowed zone among the nodes -> unschedulable', () => {
    const decision = schedulePod(input([claim('c', { className: 'wffc' })], { nodes: [nodes[0]!] }));
    expect(decision).toEqual({
      action: 'unschedulable',
      message: "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.",
    });
  });

  it('WaitForFirstConsumer claim and an Available static PV outside allowedTopologies -> its node is feasible too', () => {
    const c = claim('c', { className: 'wffc' });
    const v = volume('static', { className: 'wffc', zone: 'us-east-1a' });
    const decision = schedulePod(input([c], { nodes: [nodes[0]!], volumes: [v] }));
    expect(decision).toEqual({ action: 'selectNode', node: 'node-a', claims: ['c'] });
  });

  it('selected-node already set and still feasible -> wait for binding', () => {
    const c = claim('c', { className: 'wffc', annotations: { [SELECTED]: 'node-b' } });
    expect(schedulePod(input([c], { podsPerNode: new Map([['node-b', 9]]) }))).toMatchObject({ action: 'wait' });
  });

  it('selected-node removed by the provisioner -> a node is selected again', () => {
    const c = claim('c', { className: 'wffc' });
    const decision = schedulePod(input([c], { nodes: [node('node-b', { zone: 'us-east-1b', unschedulable: true }), nodes[2]!] }));
    expect(decision).toEqual({ action: 'selectNode', node: 'node-c', claims: ['c'] });
  });

  it('selected node no longer feasible -> another node replaces it', () => {
    const c = claim('c', { className: 'wffc', annotations: { [SELECTED]: 'node-b' } });
    const decision = schedulePod(input([c], { nodes: [node('node-b', { zone: 'us-east-1b', ready: false }), nodes[2]!] }));
    expect(decision).toEqual({ action: 'selectNode', node: 'node-c', claims: ['c'] });
  });

  it('claims bound after selection -> the pod goes to the selected node, not the emptiest', () => {
    const { claim: c, volume: v } = boundPair('c', { zone: 'us-east-1b' });
    c.metadata.annotations = { ...c.metadata.annotations, [SELECTED]: 'node-c' };
    const decision = schedulePod(input([c], { volumes: [v], podsPerNode: new Map([['node-c', 4]]) }));
    expect(decision).toEqual({ action: 'bind', node: 'node-c' });
  });
});
