/**
 * The field-set and typed-value primitives under server-side apply, against what
 * structured-merge-diff does with the same input.
 */
import { describe, expect, it } from 'vitest';
import { RESOURCES } from '../../../lib/local/kube/resources.js';
import { resolve, rootType } from '../../../lib/local/kube/schema/schema.js';
import { FieldSet, pathText } from '../../../lib/local/kube/ssa/fieldpath.js';
import { compare, merge, toFieldSet } from '../../../lib/local/kube/ssa/typed.js';

const deployment = rootType(RESOURCES.deployments);

describe('schema', () => {
  it('every served kind -> a root type in schema.json with apiVersion, kind and metadata (regenerate with bin/kube-schema.ts when this fails)', () => {
    for (const info of Object.values(RESOURCES)) {
      const fields = resolve(rootType(info)).map?.fields;
      expect([...(fields?.keys() ?? [])].filter((f) => ['apiVersion', 'kind', 'metadata'].includes(f)).sort(), info.kind).toEqual(['apiVersion', 'kind', 'metadata']);
    }
  });
});

describe('field sets', () => {
  it('FieldsV1 -> read and written back the same, "." marking a member with children', () => {
    const fieldsV1 = { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } }, 'f:replicas': {} } };
    const set = FieldSet.fromFieldsV1(fieldsV1);
    expect(set.paths().map(pathText)).toEqual(['.spec.replicas', '.spec.containers[name="app"]', '.spec.containers[name="app"].image', '.spec.containers[name="app"].name']);
    expect(set.toFieldsV1()).toEqual(fieldsV1);
  });

  it('difference keeps what is under a removed member; recursive difference drops it', () => {
    const set = FieldSet.of([['f:a'], ['f:a', 'f:b'], ['f:c']]);
    const a = FieldSet.of([['f:a']]);
    expect(set.difference(a).paths().map(pathText)).toEqual(['.c', '.a.b']);
    expect(set.recursiveDifference(a).paths().map(pathText)).toEqual(['.c']);
    expect(set.intersection(FieldSet.of([['f:a', 'f:b'], ['f:x']])).paths().map(pathText)).toEqual(['.a.b']);
  });

  it('the field set of a Deployment -> leaves, keyed items (with a defaulted key field), atomic selector and empty structs as members', () => {
    const value = {
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: { spec: { securityContext: {}, containers: [{ name: 'app', ports: [{ containerPort: 80 }], env: [] }] } },
      },
    };
    expect(toFieldSet(value, deployment).paths().map(pathText)).toEqual([
      '.spec.selector',
      '.spec.template.spec.securityContext',
      '.spec.template.spec.containers[name="app"]',
      '.spec.template.spec.containers[name="app"].name',
      '.spec.template.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"]',
      '.spec.template.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"].containerPort',
    ]);
  });

  it('merge of associative lists -> live items kept, applied ones merged by key in the applied order', () => {
    const containers = (...items: unknown[]) => ({ spec: { template: { spec: { containers: items } } } });
    const merged = merge(containers({ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }, { name: 'c', image: 'c:1' }), containers({ name: 'c', image: 'c:2' }, { name: 'a' }), deployment);
    expect(merged).toEqual(containers({ name: 'b', image: 'b:1' }, { name: 'c', image: 'c:2' }, { name: 'a', image: 'a:1' }));
  });

  it('compare -> added, modified and removed leaves', () => {
    const { added, modified, removed } = compare({ spec: { replicas: 1, paused: true } }, { spec: { replicas: 2, minReadySeconds: 5 } }, deployment);
    expect([added, modified, removed].map((s) => s.paths().map(pathText))).toEqual([['.spec.minReadySeconds'], ['.spec.replicas'], ['.spec.paused']]);
  });
});
