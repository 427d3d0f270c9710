/** Which updates are news (lib/forwarder/changes.ts, dependents.ts): "update -> offered or not". */
import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Annotations, Finalizers } from '../../lib/contract/index.js';
import { attachmentNews, ChangeFilter, claimNews, fingerprint, volumeNews } from '../../lib/forwarder/changes.js';
import { csiNodeNews, nodeNews } from '../../lib/forwarder/dependents.js';
import { DRIVER, attachment, claim, csiNode, node, volume } from './objects.js';

const ours = { driver: DRIVER };
const attacher = Finalizers.attacher(DRIVER);

/** Whether an update from `before` to `after` is offered, by a filter that saw `before`. */
function offered<T extends KubernetesObject>(news: (object: T) => unknown, before: T, after: T): boolean {
  const filter = new ChangeFilter<T>(news);
  expect(filter.isNews('add', before)).toBe(true);
  return filter.isNews('update', after);
}

/** `object` with `change` applied to a deep copy, and a new resourceVersion (as every write bumps it). */
function written<T extends KubernetesObject>(object: T, change: (copy: T) => void): T {
  const copy = structuredClone(object);
  change(copy);
  copy.metadata = { ...copy.metadata, resourceVersion: String(Number(object.metadata?.resourceVersion ?? '1') + 1) };
  return copy;
}

describe('VolumeAttachment updates', () => {
  const va = attachment('csi-1', 'pvc-1', 'n1');
  const news = (o: typeof va) => attachmentNews(o, ours);
  it.each([
    ['status attached + attachmentMetadata (volhook) -> not offered', (c: typeof va) => void (c.status = { attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' } }), false],
    ['attachError rewritten with a new time (volhook) -> not offered', (c: typeof va) => void (c.status = { attached: false, attachError: { time: new Date('2026-12-01T10:00:05Z'), message: 'no slot' } }), false],
    ['detachError (volhook) -> not offered', (c: typeof va) => void (c.status = { attached: true, detachError: { time: new Date(), message: 'busy' } }), false],
    ['the attacher finalizer added (volhook) -> not offered', (c: typeof va) => void (c.metadata!.finalizers = [attacher]), false],
    ['the node-id annotation (volhook) -> not offered', (c: typeof va) => void (c.metadata!.annotations = { [Annotations.attachedNodeId]: 'i-0aaa' }), false],
    ['managedFields only -> not offered', (c: typeof va) => void (c.metadata!.managedFields = [{ manager: 'volhook', operation: 'Update' }]), false],
    ['deletionTimestamp (a user deleting it) -> offered', (c: typeof va) => void (c.metadata!.deletionTimestamp = new Date()), true],
    ['another finalizer -> offered', (c: typeof va) => void (c.metadata!.finalizers = ['example.com/hold']), true],
    ['another annotation -> offered', (c: typeof va) => void (c.metadata!.annotations = { 'example.com/note': 'x' }), true],
    ['the node changed in spec -> offered', (c: typeof va) => void (c.spec.nodeName = 'n2'), true],
  ])('%s', (_name, change, expected) => {
    expect(offered(news, va, written(va, change))).toBe(expected);
  });
});

describe('PersistentVolume and claim updates', () => {
  const pv = volume('pvc-1', { provisionedBy: DRIVER });
  const pvc = claim('data', { selectedNode: 'n1' });
  it.each([
    ['PV: provisioner finalizer added (volhook) -> not offered', (c: typeof pv) => void (c.metadata!.finalizers = [Finalizers.provisioner]), false],
    ['PV: attacher finalizer added (volhook) -> not offered', (c: typeof pv) => void (c.metadata!.finalizers = [attacher]), false],
    ['PV: pv-protection added (Kubernetes) -> offered', (c: typeof pv) => void (c.metadata!.finalizers = [attacher, 'kubernetes.io/pv-protection']), true],
    ['PV: Released (the PV controller) -> offered', (c: typeof pv) => void (c.status = { phase: 'Released' }), true],
    ['PV: deletionTimestamp -> offered', (c: typeof pv) => void (c.metadata!.deletionTimestamp = new Date()), true],
  ])('%s', (_name, change, expected) => {
    expect(offered((o: typeof pv) => volumeNews(o, ours), pv, written(pv, change))).toBe(expected);
  });

  it.each([
    ['claim: volhook’s provisioning protection added -> not offered', (c: typeof pvc) => void (c.metadata!.finalizers = [Finalizers.claimProtection]), false],
    ['claim: bound by the PV controller -> offered', (c: typeof pvc) => void (c.spec!.volumeName = 'pvc-1'), true],
    ['claim: selected node removed (the scheduler will choose again) -> offered', (c: typeof pvc) => void delete c.metadata!.annotations![Annotations.selectedNode], true],
    ['claim: deletionTimestamp -> offered', (c: typeof pvc) => void (c.metadata!.deletionTimestamp = new Date()), true],
  ])('%s', (_name, change, expected) => {
    expect(offered((o: typeof pvc) => claimNews(o, ours), pvc, written(pvc, change))).toBe(expected);
  });
});

describe('Node and CSINode updates (heartbeats are not news)', () => {
  const n1 = node('n1', 'eu-west-1a');
  const c1 = csiNode('n1', 'i-0aaa', 25);
  it.each([
    ['Node: a heartbeat (conditions) -> not offered', (c: typeof n1) => void (c.status = { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date() }] }), false],
    ['Node: a zone label changed -> offered', (c: typeof n1) => void (c.metadata!.labels!['topology.kubernetes.io/zone'] = 'eu-west-1b'), true],
    ['Node: providerID set -> offered', (c: typeof n1) => void (c.spec!.providerID = 'aws:///eu-west-1a/i-0bbb'), true],
  ])('%s', (_name, change, expected) => {
    expect(offered(nodeNews, n1, written(n1, change))).toBe(expected);
  });

  it.each([
    ['CSINode: another driver’s entry changed -> not offered', (c: typeof c1) => void (c.spec.drivers[0]!.nodeID = 'y'), false],
    ['CSINode: our driver’s attachment limit changed -> offered', (c: typeof c1) => void (c.spec.drivers[1]!.allocatable = { count: 10 }), true],
  ])('%s', (_name, change, expected) => {
    expect(offered((o: typeof c1) => csiNodeNews(o, DRIVER), c1, written(c1, change))).toBe(expected);
  });
});

describe('ChangeFilter', () => {
  it('add and delete are always offered; an object deleted and created again is new', () => {
    const filter = new ChangeFilter(nodeNews);
    const n1 = node('n1', 'eu-west-1a');
    expect(filter.isNews('add', n1)).toBe(true);
    expect(filter.isNews('update', n1)).toBe(false);
    expect(filter.isNews('delete', n1)).toBe(true);
    expect(filter.isNews('update', n1)).toBe(true);
  });

  it('the same object from a list (Dates, model key order) and from a watch (strings) -> the same fingerprint', () => {
    const listed = { metadata: { name: 'a', creationTimestamp: new Date('2026-12-01T10:00:00Z'), uid: 'u' }, spec: { b: 1, a: 2 } };
    const watched = JSON.parse('{"spec":{"a":2,"b":1},"metadata":{"uid":"u","name":"a","creationTimestamp":"2026-12-01T10:00:00Z"}}');
    expect(fingerprint(listed)).toBe(fingerprint(watched));
    expect(fingerprint({ ...watched, spec: { a: 3, b: 1 } })).not.toBe(fingerprint(watched));
  });
});
