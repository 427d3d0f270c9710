/**
 * The forwarder's part of group snapshots: the group content's item (its class, each member
 * volume with its PV and claim), the watches that offer it, and that it goes only to a backend
 * whose check answer says it serves group snapshots.
 */
import type { KubernetesObject, V1PersistentVolume } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ItemSchema, itemKey } from '../../lib/contract/index.js';
import { postCheck, ServedFeatures, type FetchLike } from '../../lib/forwarder/backend-client.js';
import { groupSnapshotContentNews } from '../../lib/forwarder/changes.js';
import { Dependents } from '../../lib/forwarder/dependents.js';
import { itemSource } from '../../lib/forwarder/item-source.js';
import { buildGroupSnapshotContentItem, parseItemKey, type GroupSnapshotClassObject, type GroupSnapshotContentObject } from '../../lib/forwarder/items.js';
import { WATCHES, type Resource, type Watch, type WatchContext, type WatchedObjects } from '../../lib/forwarder/watches.js';
import { DRIVER, viewOf, volume } from './objects.js';

const ownership = { provisioner: DRIVER, driver: DRIVER };

const groupContent = (name: string, extra: Partial<GroupSnapshotContentObject> = {}): GroupSnapshotContentObject => ({
  apiVersion: 'groupsnapshot.storage.k8s.io/v1',
  kind: 'VolumeGroupSnapshotContent',
  metadata: { name, uid: `${name}-uid` },
  spec: {
    driver: DRIVER,
    deletionPolicy: 'Delete',
    source: { volumeHandles: ['vol-0000000000000000a', 'vol-0000000000000000b'] },
    volumeGroupSnapshotClassName: 'group',
    volumeGroupSnapshotRef: { namespace: 'shop', name: 'nightly', uid: 'vgs-uid' },
  },
  ...extra,
});
const groupClass: GroupSnapshotClassObject = { apiVersion: 'groupsnapshot.storage.k8s.io/v1', kind: 'VolumeGroupSnapshotClass', metadata: { name: 'group' }, driver: DRIVER, deletionPolicy: 'Delete' };

/** A PV of our driver for `handle`, bound to shop/`claim`. */
function memberPv(name: string, handle: string, claim: string): V1PersistentVolume {
  const pv = volume(name);
  pv.spec!.csi = { driver: DRIVER, volumeHandle: handle };
  pv.spec!.claimRef = { namespace: 'shop', name: claim };
  return pv;
}
const pvs = [memberPv('pv-a', 'vol-0000000000000000a', 'data-a'), memberPv('pv-b', 'vol-0000000000000000b', 'data-b')];

function contextOf(objects: Partial<{ [R in Resource]: WatchedObjects[R][] }>): WatchContext {
  const cache = <T extends KubernetesObject>(list: T[] = []) => ({
    get: (name: string, namespace?: string) => list.find((o) => o.metadata?.name === name && (namespace === undefined || o.metadata?.namespace === namespace)),
    list: () => list,
  });
  return {
    ownership,
    dependents: new Dependents({ claims: () => [], attachments: () => [] }),
    ready: () => true,
    caches: Object.fromEntries((Object.keys(WATCHES) as Resource[]).map((r) => [r, cache(objects[r] as KubernetesObject[] | undefined)])) as unknown as WatchContext['caches'],
  };
}
const keysOf = <R extends Resource>(resource: R, object: WatchedObjects[R], ctx: WatchContext, type: 'add' | 'update' | 'delete' = 'update') =>
  [...(WATCHES[resource] as Watch<WatchedObjects[R]>).keys(type, object, ctx)].map((o) => o.key);

describe('group snapshot content items', () => {
  it('a group content of ours -> its item with its class and each member volume\'s PV and claim, valid against the contract', () => {
    const item = buildGroupSnapshotContentItem(groupContent('groupsnapcontent-1'), viewOf({ volumes: pvs, groupSnapshotClasses: [groupClass] }), DRIVER);
    const parsed = ItemSchema.parse(item);
    expect(itemKey(parsed)).toBe('VolumeGroupSnapshotContent/groupsnapcontent-1');
    expect(parseItemKey('VolumeGroupSnapshotContent/groupsnapcontent-1')).toEqual({ kind: 'VolumeGroupSnapshotContent', name: 'groupsnapcontent-1' });
    expect(parsed).toMatchObject({
      groupSnapshotClass: { metadata: { name: 'group' }, driver: DRIVER },
      members: [
        { volumeHandle: 'vol-0000000000000000a', persistentVolume: 'pv-a', claim: { namespace: 'shop', name: 'data-a' } },
        { volumeHandle: 'vol-0000000000000000b', persistentVolume: 'pv-b', claim: { namespace: 'shop', name: 'data-b' } },
      ],
    });
  });

  it('a volume no PV of our driver names, and a class not there -> member and class null', () => {
    const other = memberPv('pv-other', 'vol-0000000000000000b', 'x');
    other.spec!.csi!.driver = 'other.csi.example.com';
    const item = ItemSchema.parse(buildGroupSnapshotContentItem(groupContent('groupsnapcontent-1'), viewOf({ volumes: [pvs[0]!, other] }), DRIVER));
    expect(item).toMatchObject({ groupSnapshotClass: null, members: [{ persistentVolume: 'pv-a' }, { volumeHandle: 'vol-0000000000000000b', persistentVolume: null, claim: null }] });
  });
});

describe('group snapshot watches', () => {
  it('a group content of ours -> offered; another driver\'s -> not; a class change -> its unsettled contents; resync skips a ready one', () => {
    const ready = groupContent('groupsnapcontent-ready', { status: { readyToUse: true } });
    const ctx = contextOf({ volumegroupsnapshotcontents: [groupContent('groupsnapcontent-1'), ready] });
    expect(keysOf('volumegroupsnapshotcontents', groupContent('groupsnapcontent-1'), ctx)).toEqual(['VolumeGroupSnapshotContent/groupsnapcontent-1']);
    const foreign = groupContent('groupsnapcontent-2');
    foreign.spec!.driver = 'other.csi.example.com';
    expect(keysOf('volumegroupsnapshotcontents', foreign, ctx)).toEqual([]);
    expect(keysOf('volumegroupsnapshotclasses', groupClass, ctx)).toEqual(['VolumeGroupSnapshotContent/groupsnapcontent-1']);
    expect([...WATCHES.volumegroupsnapshotcontents.resync!(ready, ctx)]).toEqual([]);
    expect(WATCHES.volumegroupsnapshotcontents.optional?.whileAbsent).toBe('group snapshots are off until the group snapshot CRDs (groupsnapshot.storage.k8s.io/v1) are installed');
  });

  it('the echo of the sidecar writes (status, being-created mark) -> not news; a deletion timestamp -> news', () => {
    const before = groupContent('groupsnapcontent-1');
    const echo = { ...before, metadata: { ...before.metadata, resourceVersion: '9', annotations: { 'groupsnapshot.storage.kubernetes.io/volumegroupsnapshot-being-created': 'yes' } }, status: { volumeGroupSnapshotHandle: 'h', readyToUse: false } };
    expect(groupSnapshotContentNews(echo, ownership)).toEqual(groupSnapshotContentNews(before, ownership));
    const deleted = { ...before, metadata: { ...before.metadata, deletionTimestamp: new Date() } };
    expect(groupSnapshotContentNews(deleted, ownership)).not.toEqual(groupSnapshotContentNews(before, ownership));
  });
});

describe('group items only to a backend that serves them', () => {
  const ctx = contextOf({ volumegroupsnapshotcontents: [groupContent('groupsnapcontent-1')], persistentvolumes: pvs, volumegroupsnapshotclasses: [groupClass] });
  const source = (serves: boolean, said: string[] = []) =>
    itemSource({ ctx, ownership, readPv: async () => false, serves: () => serves, logger: { info: (msg) => void said.push(msg) } });

  it('a backend that serves group snapshots -> the item is built; one that does not -> none, said once', async () => {
    expect(await source(true)('VolumeGroupSnapshotContent/groupsnapcontent-1', undefined)).toMatchObject({ kind: 'VolumeGroupSnapshotContent' });
    const said: string[] = [];
    const withhold = source(false, said);
    expect(await withhold('VolumeGroupSnapshotContent/groupsnapcontent-1', undefined)).toBeUndefined();
    expect(await withhold('VolumeGroupSnapshotContent/groupsnapcontent-1', undefined)).toBeUndefined();
    expect(said).toEqual([expect.stringContaining('does not serve group snapshots')]);
  });

  it('the check answer names the features: learnt; an answer without them, or a backend without the check -> none', async () => {
    const answering = (status: number, body: unknown): FetchLike => async () => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    const features = new ServedFeatures();
    const options = (fetch: FetchLike) => ({ apiUrl: 'http://backend.test/', clusterId: 'c-1', secret: () => 'a-secret-of-at-least-24-bytes', fetch, timeoutMs: 100, features });
    await postCheck(options(answering(200, { clusterId: 'c-1', accepted: true, serves: ['groupSnapshots', 'somethingNewer'] })));
    expect(features.has('groupSnapshots')).toBe(true);
    await postCheck(options(answering(200, { clusterId: 'c-1', accepted: true })));
    expect(features.has('groupSnapshots')).toBe(false);
    await postCheck(options(answering(200, { clusterId: 'c-1', accepted: true, serves: ['groupSnapshots'] })));
    await expect(postCheck(options(answering(404, { message: 'Not Found' })))).resolves.toBe('unknown');
    expect(features.has('groupSnapshots')).toBe(false);
  });
});
