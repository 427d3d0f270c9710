import { describe, expect, it } from 'vitest';
import { applyJsonPatch, applyMergePatch } from '../../../lib/local/kube/patch.js';
import { parseFieldSelector, parseLabelSelector, labelSelectorMatches } from '../../../lib/local/kube/selectors.js';
import { applyStrategicMergePatch } from '../../../lib/local/kube/strategic.js';

function error(fn: () => unknown): { code?: number; reason?: string } {
  try {
    fn();
  } catch (err) {
    return err as { code?: number; reason?: string };
  }
  throw new Error('expected a throw');
}

describe('JSON patch', () => {
  it('add, replace, move, copy, remove on nested paths with ~1 escapes -> applied in order', () => {
    const doc = { metadata: { annotations: { 'a/b': '1' } }, list: [1, 2] };
    const out = applyJsonPatch(doc, [
      { op: 'add', path: '/list/1', value: 9 },
      { op: 'replace', path: '/metadata/annotations/a~1b', value: '2' },
      { op: 'copy', from: '/metadata/annotations/a~1b', path: '/copied' },
      { op: 'move', from: '/list/0', path: '/list/-' },
      { op: 'remove', path: '/metadata/annotations' },
    ]);
    expect(out).toEqual({ metadata: {}, list: [9, 2, 1], copied: '2' });
    expect(doc.list).toEqual([1, 2]);
  });

  it('remove of a missing path or a failed test -> 422 Invalid; malformed operations -> 400', () => {
    expect(error(() => applyJsonPatch({}, [{ op: 'remove', path: '/nope' }]))).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(error(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]))).toMatchObject({ code: 422 });
    expect(error(() => applyJsonPatch({}, { op: 'add' }))).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(error(() => applyJsonPatch({}, [{ op: 'frobnicate', path: '/a' }]))).toMatchObject({ code: 400 });
  });
});

describe('merge patch', () => {
  it('nested maps merge, null deletes, lists replace whole', () => {
    expect(applyMergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] })).toEqual({ a: { c: 2, d: 3 }, l: [3] });
  });
});

describe('strategic merge patch', () => {
  it('status conditions merge by type; atomic lists (accessModes) replace', () => {
    const pvc = { spec: { accessModes: ['ReadWriteOnce'] }, status: { conditions: [{ type: 'Resizing', status: 'True' }, { type: 'Other', status: 'False' }] } };
    const out = applyStrategicMergePatch(pvc, { spec: { accessModes: ['ReadWriteMany'] }, status: { conditions: [{ type: 'Resizing', status: 'False' }] } });
    expect(out.status.conditions).toEqual([{ type: 'Resizing', status: 'False' }, { type: 'Other', status: 'False' }]);
    expect(out.spec.accessModes).toEqual(['ReadWriteMany']);
  });

  it('kubectl apply directives ($setElementOrder, $retainKeys, $patch: replace) -> honoured or ignored, never stored', () => {
    const pod = { spec: { containers: [{ name: 'a', image: 'a:1', env: [{ name: 'X', value: '1' }] }], strategy: { type: 'A', extra: 1 } } };
    const out = applyStrategicMergePatch(pod, {
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }],
        containers: [{ name: 'a', env: [{ name: 'Y', value: '2' }] }],
        strategy: { $retainKeys: ['type'], type: 'B' },
      },
    }) as unknown as { spec: Record<string, unknown> };
    expect(out.spec).toEqual({ containers: [{ name: 'a', image: 'a:1', env: [{ name: 'X', value: '1' }, { name: 'Y', value: '2' }] }], strategy: { type: 'B' } });
    const replaced = applyStrategicMergePatch({ metadata: { labels: { a: '1', b: '2' } } }, { metadata: { labels: { $patch: 'replace', c: '3' } } });
    expect(replaced.metadata.labels).toEqual({ c: '3' });
  });

  it("a Deployment's pod template and a Service's ports -> merged by the same keys as a Pod's spec (name, containerPort, port)", () => {
    const deployment = { spec: { template: { spec: { containers: [{ name: 'a', image: 'a:1', ports: [{ containerPort: 80, name: 'http' }] }, { name: 'b', image: 'b:1' }] } } } };
    const out = applyStrategicMergePatch(deployment, { spec: { template: { spec: { containers: [{ name: 'a', image: 'a:2', ports: [{ containerPort: 81 }] }] } } } });
    expect(out.spec.template.spec.containers).toEqual([
      { name: 'a', image: 'a:2', ports: [{ containerPort: 80, name: 'http' }, { containerPort: 81 }] },
      { name: 'b', image: 'b:1' },
    ]);
    const service = applyStrategicMergePatch({ spec: { ports: [{ port: 80, name: 'http' }, { port: 443, name: 'https' }] } }, { spec: { ports: [{ port: 443, targetPort: 8443 }] } });
    expect(service.spec.ports).toEqual([{ port: 80, name: 'http' }, { port: 443, name: 'https', targetPort: 8443 }]);
  });
});

describe('selectors', () => {
  it('label selector grammar -> set-based and equality requirements; garbage -> 400', () => {
    const match = parseLabelSelector('env in (prod,staging), tier!=web, !legacy, zone, rank>2');
    expect(match({ env: 'prod', tier: 'db', zone: 'a', rank: '3' })).toBe(true);
    expect(match({ env: 'prod', tier: 'db', zone: 'a', rank: '3', legacy: 'x' })).toBe(false);
    expect(match({ env: 'dev', tier: 'db', zone: 'a', rank: '3' })).toBe(false);
    expect(error(() => parseLabelSelector('env in prod'))).toMatchObject({ code: 400 });
    expect(error(() => parseLabelSelector('a=b,'))).toMatchObject({ code: 400 });
  });

  it('metav1.LabelSelector -> matchLabels and matchExpressions both apply; absent selects all', () => {
    const selector = { matchLabels: { app: 'db' }, matchExpressions: [{ key: 'zone', operator: 'NotIn' as const, values: ['a'] }] };
    expect(labelSelectorMatches(selector, { app: 'db', zone: 'b' })).toBe(true);
    expect(labelSelectorMatches(selector, { app: 'db', zone: 'a' })).toBe(false);
    expect(labelSelectorMatches(undefined, {})).toBe(true);
  });

  it('field selector -> only allowed fields, with escaped values', () => {
    const match = parseFieldSelector('metadata.name=a\\,b,status.phase!=Failed', new Set(['metadata.name', 'status.phase']));
    expect(match({ metadata: { name: 'a,b' }, status: { phase: 'Pending' } })).toBe(true);
    expect(error(() => parseFieldSelector('spec.x=1', new Set(['metadata.name'])))).toMatchObject({ code: 400 });
  });
});
