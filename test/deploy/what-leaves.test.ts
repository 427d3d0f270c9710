/**
 * docs/deploy.md's "What leaves the cluster" is what the forwarder sends: each row's fields are
 * the contract's zod schemas' (lib/contract), the headers those a reconcile request carries,
 * and the stripped keys the forwarder's transforms drop (lib/forwarder/transforms.ts).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CheckRequestSchema } from '../../lib/contract/check.js';
import { ItemSchema, ReconcileRequestSchema } from '../../lib/contract/items.js';
import { NodeInfoSchema } from '../../lib/contract/kube-objects.js';
import { VolumeReportItemSchema } from '../../lib/contract/report.js';
import { postReconcile } from '../../lib/forwarder/backend-client.js';
import { UNREAD } from '../../lib/forwarder/transforms.js';

const docs = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');

/** The section's table: row label -> the backticked names of its second cell. */
function rows(): Map<string, string[]> {
  const section = docs.split('### What leaves the cluster')[1]!.split('\n### ')[0]!.split('\n## ')[0]!;
  const table = section.split('\n').filter((line) => line.startsWith('| `'));
  return new Map(
    table.map((line) => {
      const [, label, fields] = line.split('|');
      return [/`([^`]+)`/.exec(label!)![1]!, [...fields!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)];
    }),
  );
}

interface ZodDef {
  type: string;
  shape?: Record<string, { _zod: { def: ZodDef } }>;
  options?: { _zod: { def: ZodDef } }[];
  innerType?: { _zod: { def: ZodDef } };
  element?: { _zod: { def: ZodDef } };
}
/** A schema's definition, under optional, nullable and default wrappers. */
function defOf(schema: unknown): ZodDef {
  let def = (schema as { _zod: { def: ZodDef } })._zod.def;
  while (def.innerType) def = def.innerType._zod.def;
  return def;
}
const keysOf = (schema: unknown) => Object.keys(defOf(schema).shape ?? {});

describe('docs/deploy.md, What leaves the cluster', () => {
  const table = rows();

  it('every item kind of the contract has its row, with exactly its schema\'s fields; no row for a kind it does not have', () => {
    const kinds = defOf(ItemSchema).options!.map((o) => {
      const shape = o._zod.def.shape!;
      return [((shape.kind!._zod.def as unknown as { values: string[] }).values)[0]!, Object.keys(shape)] as const;
    });
    expect(kinds.length).toBe(7);
    for (const [kind, fields] of kinds) expect(table.get(kind), kind).toEqual(fields);
    const documentedKinds = [...table.keys()].filter((label) => /^[A-Z]/.test(label));
    expect(documentedKinds.sort()).toEqual(kinds.map(([kind]) => kind).sort());
  });

  it('the request bodies, the report\'s entries and a node: their schemas\' fields', () => {
    expect(table.get('reconcile')).toEqual(keysOf(ReconcileRequestSchema));
    expect(table.get('check')).toEqual(keysOf(CheckRequestSchema));
    expect(table.get('node')).toEqual(keysOf(NodeInfoSchema));
    const report = defOf(defOf(VolumeReportItemSchema).shape!.report).shape!;
    for (const entry of ['volumes', 'attachments', 'snapshots']) {
      expect(table.get(`report.${entry}[]`), entry).toEqual(keysOf(defOf(report[entry]).element));
    }
    // claims are strings (uids), the only entry without fields.
    expect(defOf(defOf(report.claims).element).type).toBe('string');
    expect(Object.keys(report).sort()).toEqual(['attachments', 'claims', 'snapshots', 'volumes']);
  });

  it('the keys stripped from every object: the transforms\' UNREAD', () => {
    expect(table.get('stripped')).toEqual([...UNREAD]);
  });

  it('the headers: those a reconcile request carries, every one', async () => {
    let sent: Record<string, string> = {};
    await postReconcile(
      {
        apiUrl: 'http://127.0.0.1:1',
        clusterId: 'c1',
        secret: () => 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
        timeoutMs: 1_000,
        fetch: async (_url, init) => {
          sent = Object.fromEntries(new Headers(init?.headers).entries());
          return new Response(JSON.stringify({ results: [] }), { status: 200, headers: { 'content-type': 'application/json' } });
        },
      },
      [],
    ).catch(() => undefined);
    expect(Object.keys(sent).length).toBeGreaterThan(3);
    expect(table.get('headers')!.sort()).toEqual(Object.keys(sent).sort());
  });
});
