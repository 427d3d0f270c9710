/**
 * `fieldValidation`: what a write does with fields its kind's schema lacks, and with fields a
 * body repeats — Strict refuses, Warn (the default) drops them with a warning, Ignore drops
 * them — and the write options' own validation.
 */
import { describe, expect, it } from 'vitest';
import { duplicateJsonFields } from '../../../lib/local/kube/field-validation.js';
import { handleResource, type ApiRequest } from '../../../lib/local/kube/handlers.js';
import { createObjectStore, type KubeObject } from '../../../lib/local/kube/index.js';
import { managerFromUserAgent, optionsFromQuery, writeOptions } from '../../../lib/local/kube/request-options.js';
import { route } from '../../../lib/local/kube/routes.js';
import { refusalOf } from './helpers.js';

const CM = '/api/v1/namespaces/default/configmaps';

function request(method: string, path: string, query: string, body: string, contentType = 'application/json'): ApiRequest {
  const target = route(path);
  if (target.kind !== 'resource') throw new Error(path);
  return { method, route: target, query: new URLSearchParams(query), contentType, body: Buffer.from(body), table: false };
}


const typo = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typo' }, dataa: { a: '1' }, data: { b: '2' } });

describe('field validation', () => {
  it('create with an unknown field: Strict -> 400 naming it; Warn (and no directive) -> stored without it, one warning; Ignore -> stored without it, silently', () => {
    const store = createObjectStore();
    const strict = refusalOf(() => handleResource(store, request('POST', CM, 'fieldValidation=Strict', typo)));
    expect([strict.code, strict.message]).toEqual([400, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "dataa"']);
    expect(store.get('configmaps', 'typo', 'default')).toBeUndefined();

    for (const query of ['fieldValidation=Warn', '']) {
      const warned = handleResource(store, request('POST', CM, query, typo));
      expect(warned.warnings).toEqual(['unknown field "dataa"']);
      expect(warned.body).not.toHaveProperty('dataa');
      expect((warned.body as KubeObject).data).toEqual({ b: '2' });
      store.delete('configmaps', 'typo', 'default');
    }
    const ignored = handleResource(store, request('POST', CM, 'fieldValidation=Ignore', typo));
    expect(ignored.warnings).toBeUndefined();
    expect(store.get('configmaps', 'typo', 'default')).not.toHaveProperty('dataa');
  });

  it('unknown fields deep in a Deployment -> named by their JSON path; the known ones kept', () => {
    const store = createObjectStore();
    const deployment = JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replica: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'a', image: 'a', imagePullPolcy: 'Always' }] } } },
    });
    const warned = handleResource(store, request('POST', '/apis/apps/v1/namespaces/default/deployments', '', deployment));
    expect(warned.warnings).toEqual(['unknown field "spec.replica"', 'unknown field "spec.template.spec.containers[0].imagePullPolcy"']);
    expect((warned.body as { spec: { replicas: number } }).spec.replicas).toBe(1);
  });

  it('a body repeating a field: Strict -> 400 naming it; Warn -> the last value kept, a warning', () => {
    const store = createObjectStore();
    const twice = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"twice"},"data":{"a":"1","a":"2"}}';
    expect(refusalOf(() => handleResource(store, request('POST', CM, 'fieldValidation=Strict', twice))).message).toBe(
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.a"',
    );
    const warned = handleResource(store, request('POST', CM, 'fieldValidation=Warn', twice));
    expect(warned.warnings).toEqual(['duplicate field "data.a"']);
    expect((warned.body as KubeObject).data).toEqual({ a: '2' });
  });

  it('a merge patch adding an unknown field: Strict -> 422 on the patch; Warn -> applied without it', () => {
    const store = createObjectStore();
    store.create('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' }, data: { a: '1' } });
    const patch = JSON.stringify({ dataa: { x: '1' }, data: { a: '2' } });
    const strict = refusalOf(() => handleResource(store, request('PATCH', `${CM}/cm`, 'fieldValidation=Strict', patch, 'application/merge-patch+json')));
    expect(strict.code).toBe(422);
    expect(strict.message).toMatch(/^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "dataa"$/);
    expect(store.get('configmaps', 'cm', 'default')?.data).toEqual({ a: '1' });
    const warned = handleResource(store, request('PATCH', `${CM}/cm`, 'fieldValidation=Warn', patch, 'application/merge-patch+json'));
    expect(warned.warnings).toEqual(['unknown field "dataa"']);
    expect(store.get('configmaps', 'cm', 'default')).toMatchObject({ data: { a: '2' } });
    expect(store.get('configmaps', 'cm', 'default')).not.toHaveProperty('dataa');
  });

  it('server-side apply: an unknown field is refused even under Ignore; a repeated YAML key is refused under Strict, warned under Warn', () => {
    const store = createObjectStore();
    const apply = (query: string, yaml: string) => handleResource(store, request('PATCH', `${CM}/cm`, `fieldManager=alice&${query}`, yaml, 'application/apply-patch+yaml'));
    const unknown = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndataa: {a: "1"}\n';
    expect(refusalOf(() => apply('fieldValidation=Ignore', unknown)).message).toBe('failed to create typed patch object (default/cm; /v1, Kind=ConfigMap): .dataa: field not declared in schema');
    const repeated = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: "1"\n  a: "2"\n';
    expect(refusalOf(() => apply('fieldValidation=Strict', repeated)).message).toBe(
      'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already set in map',
    );
    const warned = apply('fieldValidation=Warn', repeated);
    expect(warned.warnings).toEqual(['error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already set in map']);
    expect((warned.body as KubeObject).data).toEqual({ a: '2' });
  });

  it('duplicateJsonFields -> every repeated key with its path, nested and in lists; none in a clean body', () => {
    expect(duplicateJsonFields('{"a":1,"b":{"c":[{"d":1,"d":2}, "x,y"],"c":"}"},"a":"\\"a\\""}')).toEqual(['b.c[0].d', 'b.c', 'a']);
    expect(duplicateJsonFields('{"a":{"a":{"a":1}},"b":[1,2,{"a":1}]}')).toEqual([]);
  });
});

describe('write options', () => {
  const opts = (query: string, verb: 'create' | 'update' | 'patch' | 'delete' = 'patch', apply = false) => () => writeOptions(verb, optionsFromQuery(new URLSearchParams(query)), { apply, userAgent: 'kubectl/v1.34.5 (linux/amd64) kubernetes/abc' });

  it('apply without fieldManager -> 422 with kube-apiserver\'s message; with one -> accepted', () => {
    const err = refusalOf(opts('', 'patch', true));
    expect([err.code, err.reason, err.message]).toEqual([422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch']);
    expect(opts('fieldManager=alice', 'patch', true)()).toEqual({ dryRun: false, fieldManager: 'alice', fieldValidation: 'Warn', force: false });
  });

  it('force on a non-apply patch -> 422; on an apply -> honoured', () => {
    expect(refusalOf(opts('force=true')).message).toBe('PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
    expect(opts('fieldManager=a&force=true', 'patch', true)().force).toBe(true);
    expect(refusalOf(opts('fieldManager=a&force=maybe', 'patch', true)).code).toBe(400);
  });

  it('fieldValidation other than Strict, Warn or Ignore -> 422 listing the allowed values', () => {
    expect(refusalOf(opts('fieldValidation=Loose', 'create')).message).toBe('CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"');
    expect(opts('fieldValidation=Strict', 'create')().fieldValidation).toBe('Strict');
  });

  it('a write naming no manager -> the User-Agent before its first slash, as the API server names it', () => {
    expect(opts('', 'update')().fieldManager).toBe('kubectl');
    expect(managerFromUserAgent('node')).toBe('node');
    expect(managerFromUserAgent(undefined)).toBe('');
    expect(managerFromUserAgent('x'.repeat(200)).length).toBe(128);
  });
});
