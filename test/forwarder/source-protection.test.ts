/**
 * The forwarder's part in a source's protection (lib/contract/source-protection.ts): a claim
 * item says which other claims may still make their volume from the same source; a bound claim
 * whose source still carries the protection and that nobody needs is sent again, and the claims
 * made from one source are offered when one of them stops needing it.
 */
import { readFileSync } from 'node:fs';
import type { KubernetesObject, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { renderChart } from '../../infra/tools/chart.js';
import { describe, expect, it } from 'vitest';
import { Finalizers, SourceFinalizers } from '../../lib/contract/index.js';
import { Dependents } from '../../lib/forwarder/dependents.js';
import { isOurClaim } from '../../lib/forwarder/filter.js';
import { buildClaimItem, sourceAwaitsRelease, type VolumeSnapshotObject } from '../../lib/forwarder/items.js';
import { WATCHES, type Resource, type WatchContext, type WatchedObjects } from '../../lib/forwarder/watches.js';
import { DRIVER, claim, viewOf, volume } from './objects.js';

const ownership = { provisioner: DRIVER, driver: DRIVER };

/** A claim restoring from VolumeSnapshot `nightly`; `state`: protected and pending, bound (protection dropped), or not protected yet. */
function restore(name: string, state: 'holding' | 'bound' | 'unprotected' | 'deleting'): V1PersistentVolumeClaim {
  const pvc = claim(name, state === 'bound' ? { volumeName: `pvc-uid-${name}` } : {});
  pvc.spec!.dataSource = { kind: 'VolumeSnapshot', name: 'nightly', apiGroup: 'snapshot.storage.k8s.io' };
  if (state === 'holding' || state === 'deleting') pvc.metadata!.finalizers = [Finalizers.claimProtection];
  if (state === 'deleting') pvc.metadata!.deletionTimestamp = new Date('2026-12-01T00:00:00Z');
  if (state === 'bound') pvc.status = { phase: 'Bound', capacity: { storage: '20Gi' } };
  return pvc;
}

const snapshot = (finalizers: string[]): VolumeSnapshotObject => ({
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshot',
  metadata: { name: 'nightly', namespace: 'default', uid: 'snap-uid', finalizers },
  spec: { source: { persistentVolumeClaimName: 'data' } },
});

describe('the claim item: who else holds the source', () => {
  it('holders -> the other claims made from the same snapshot that may still make their volume (live, unbound, no PV; begun or not); not itself, not a bound or deleting one, not one with its PV, not another source', () => {
    const other = claim('other-source');
    other.spec!.dataSource = { kind: 'VolumeSnapshot', name: 'weekly', apiGroup: 'snapshot.storage.k8s.io' };
    other.metadata!.finalizers = [Finalizers.claimProtection];
    const withPv = restore('has-pv', 'holding');
    const claims = [restore('a', 'holding'), restore('b', 'holding'), restore('c', 'bound'), restore('d', 'deleting'), restore('e', 'unprotected'), withPv, other];
    const view = viewOf({ claims, snapshots: [snapshot([])], volumes: [volume('pvc-uid-has-pv')] });
    const item = buildClaimItem(claims[0]!, view, DRIVER);
    expect(item.source).toMatchObject({ kind: 'VolumeSnapshot', holders: ['b', 'e'] });
  });

  it('a clone -> holders among the claims cloning the same claim', () => {
    const clone = (name: string) => {
      const pvc = claim(name);
      pvc.spec!.dataSource = { kind: 'PersistentVolumeClaim', name: 'src' };
      pvc.metadata!.finalizers = [Finalizers.claimProtection];
      return pvc;
    };
    const claims = [claim('src', { volumeName: 'pvc-src' }), clone('x'), clone('y')];
    expect(buildClaimItem(claims[1]!, viewOf({ claims }), DRIVER).source).toMatchObject({ kind: 'PersistentVolumeClaim', holders: ['y'] });
  });
});

describe('a bound claim whose source awaits release -> sent', () => {
  it('its snapshot protected, nobody holding it -> sent; another claim holding it, or no protection on it -> not (the control)', () => {
    const bound = restore('a', 'bound');
    const sent = (claims: V1PersistentVolumeClaim[], finalizers: string[]) => {
      const view = viewOf({ claims, snapshots: [snapshot(finalizers)] });
      return isOurClaim(bound, ownership, view.pv, (pvc) => sourceAwaitsRelease(pvc, view));
    };
    expect(sent([bound], [SourceFinalizers.snapshot])).toBe(true);
    expect(sent([bound, restore('b', 'holding')], [SourceFinalizers.snapshot])).toBe(false);
    expect(sent([bound], [])).toBe(false);
    expect(sent([bound], ['snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection'])).toBe(false);
  });

  it('a canary too (it provisioned the claim, so it lets the source go)', () => {
    const bound = restore('a', 'bound');
    const view = viewOf({ claims: [bound], snapshots: [snapshot([SourceFinalizers.snapshot])] });
    expect(isOurClaim(bound, { ...ownership, canary: true }, view.pv, (pvc) => sourceAwaitsRelease(pvc, view))).toBe(true);
    expect(isOurClaim(bound, { ...ownership, canary: true }, view.pv)).toBe(false);
  });
});

describe('events', () => {
  function contextOf(objects: Partial<{ [R in Resource]: WatchedObjects[R][] }>): WatchContext {
    const cache = <T extends KubernetesObject>(list: T[] = []) => ({
      get: (name: string, namespace?: string) => list.find((o) => o.metadata?.name === name && (namespace === undefined || o.metadata?.namespace === namespace)),
      list: () => list,
    });
    const caches = Object.fromEntries(
      (Object.keys(WATCHES) as Resource[]).map((resource) => [resource, cache((objects[resource] ?? []) as KubernetesObject[])]),
    ) as unknown as WatchContext['caches'];
    return { ownership, dependents: new Dependents({ claims: () => objects.persistentvolumeclaims ?? [], attachments: () => [] }), ready: () => true, caches };
  }

  it('a claim that stopped holding the source -> the bound claims made from it offered (the last to need it lets it go)', () => {
    const a = restore('a', 'bound');
    const b = restore('b', 'bound');
    const ctx = contextOf({ persistentvolumeclaims: [a, b], volumesnapshots: [snapshot([SourceFinalizers.snapshot])] });
    const keys = [...WATCHES.persistentvolumeclaims.keys('update', a, ctx)].map((o) => o.key);
    expect(keys).toEqual(['PersistentVolumeClaim/default/a', 'PersistentVolumeClaim/default/b']);
    // The control: nothing to let go -> neither bound claim is offered.
    const quiet = contextOf({ persistentvolumeclaims: [a, b], volumesnapshots: [snapshot([])] });
    expect([...WATCHES.persistentvolumeclaims.keys('update', a, quiet)]).toEqual([]);
  });

  it('a claim deleted -> the bound claims made from the same source offered (the last one may now let it go)', () => {
    const a = restore('a', 'bound');
    const gone = restore('g', 'unprotected');
    const ctx = contextOf({ persistentvolumeclaims: [a], volumesnapshots: [snapshot([SourceFinalizers.snapshot])] });
    expect([...WATCHES.persistentvolumeclaims.keys('delete', gone, ctx)].map((o) => o.key)).toEqual(['PersistentVolumeClaimDeleted/uid-g', 'PersistentVolumeClaim/default/a']);
  });

  it("the source protection on a VolumeSnapshot is volhook's own write: an echo, not news; a deletion is news", () => {
    const news = (s: VolumeSnapshotObject) => WATCHES.volumesnapshots.news(s, ownership);
    const bare = snapshot([]);
    expect(news(snapshot([SourceFinalizers.snapshot]))).toEqual(news(bare));
    expect(news({ ...bare, metadata: { ...bare.metadata, deletionTimestamp: new Date('2026-12-01T00:00:00Z') } })).not.toEqual(news(bare));
  });
});

describe('docs/snapshots.md', () => {
  const doc = readFileSync(new URL('../../docs/snapshots.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');

  it('names the finalizers as the contract spells them', () => {
    expect(doc).toContain(`\`${SourceFinalizers.snapshot}\` on a restore's VolumeSnapshot`);
    expect(doc).toContain(`\`${SourceFinalizers.claim}\` on a clone's source claim`);
  });

  it("the VolumeSnapshot verbs it names -> the chart's ClusterRole grants exactly those", () => {
    const role = renderChart().find((m) => m.kind === 'ClusterRole') as unknown as { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
    const verbs = role.rules.filter((r) => r.resources.includes('volumesnapshots')).flatMap((r) => r.verbs);
    expect(verbs.sort()).toEqual(['get', 'list', 'patch', 'watch']);
    expect(doc).toContain('VolumeSnapshots: get, list, watch and patch (the restore\'s source protection)');
  });
});
