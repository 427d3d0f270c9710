/**
 * Regenerates lib/local/kube/schema/schema.json, the field schema of every kind the local
 * Kubernetes API serves (server-side apply, field validation), from upstream files:
 *
 *   npx tsx bin/kube-schema.ts --client-go <internal.go> --crd <crd.yaml>... [--source <text>]...
 *
 * - `<internal.go>`: k8s.io/client-go `applyconfigurations/internal/internal.go` at the
 *   Kubernetes version served (the schema kube-apiserver's field manager uses for built-ins);
 * - each `<crd.yaml>`: the CustomResourceDefinition of a served custom resource
 *   (external-snapshotter `client/config/crd/snapshot.storage.k8s.io_*.yaml`, prometheus-operator
 *   `example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml`);
 * - each `--source`: a line recorded in the file saying where the inputs came from.
 *
 * Run it after adding a kind to lib/local/kube/resources.ts; it fails if a served kind has no schema.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { RESOURCES } from '../lib/local/kube/resources.js';
import { clientGoTypes, closure, crdType, schemaFileText } from '../lib/local/kube/schema/convert.js';
import type { SchemaFile, TypeDef } from '../lib/local/kube/schema/model.js';

/** Go package of each built-in group in k8s.io/api. */
const PACKAGES: Record<string, string> = {
  '': 'core',
  'storage.k8s.io': 'storage',
  'coordination.k8s.io': 'coordination',
  'rbac.authorization.k8s.io': 'rbac',
  apps: 'apps',
  policy: 'policy',
};

const { values } = parseArgs({ options: { 'client-go': { type: 'string' }, crd: { type: 'string', multiple: true }, source: { type: 'string', multiple: true } } });
if (!values['client-go']) throw new Error('usage: tsx bin/kube-schema.ts --client-go <internal.go> --crd <crd.yaml>... [--source <text>]...');

const builtins = clientGoTypes(readFileSync(values['client-go'], 'utf8'));
const kinds: Record<string, string> = {};
const crdTypes: TypeDef[] = [];
for (const path of values.crd ?? []) {
  for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
    const { kind, type } = crdType(doc.toJS());
    kinds[kind] = type.name;
    crdTypes.push(type);
  }
}
for (const info of Object.values(RESOURCES)) {
  const key = `${info.group}/${info.version}/${info.kind}`;
  if (info.custom) {
    if (!kinds[key]) throw new Error(`no CRD given for ${key}`);
    continue;
  }
  const pkg = PACKAGES[info.group];
  if (pkg === undefined) throw new Error(`no Go package known for group ${info.group}`);
  kinds[key] = `io.k8s.api.${pkg}.v1.${info.kind}`;
}
const roots = [...Object.values(kinds).filter((name) => !crdTypes.some((t) => t.name === name)), 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', '__untyped_deduced_'];
const file: SchemaFile = {
  sources: values.source ?? [],
  kinds: Object.fromEntries(Object.entries(kinds).sort(([a], [b]) => (a < b ? -1 : 1))),
  types: [...closure(builtins, roots), ...crdTypes],
};
const out = new URL('../lib/local/kube/schema/schema.json', import.meta.url);
writeFileSync(out, schemaFileText(file));
console.log(`wrote ${out.pathname}: ${file.types.length} types, ${Object.keys(kinds).length} kinds`);
