/**
 * The contract's schemas are built on first use, not at import (lib/contract/deferred.ts): a
 * stand-in that, once touched, is the schema itself — same parse, same errors, usable inside
 * other schemas, built once.
 */
import * as z from 'zod/mini';
import { describe, expect, it, vi } from 'vitest';
import { deferred } from '../../lib/contract/deferred.js';

const buildPerson = () => z.object({ name: z.string().check(z.minLength(1)), age: z.optional(z.int()) });

describe('deferred', () => {
  it('builds nothing until the schema is first used, then builds it once', () => {
    const build = vi.fn(buildPerson);
    const Person = deferred(build);
    expect(build).not.toHaveBeenCalled();
    expect(Person.parse({ name: 'ada', age: 36 })).toEqual({ name: 'ada', age: 36 });
    expect(Person.safeParse({ name: 'bob' }).success).toBe(true);
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('once used, it is the schema: same prototype, same results and issues as one built at once', () => {
    const Person = deferred(buildPerson);
    const eager = buildPerson();
    for (const input of [{ name: 'ada' }, { name: '' }, { name: 'ada', age: 1.5 }, 'not an object', null]) {
      const a = Person.safeParse(input);
      const b = eager.safeParse(input);
      expect(a.success).toBe(b.success);
      expect(a.success ? a.data : a.error.issues).toEqual(b.success ? b.data : b.error.issues);
    }
    expect(Object.getPrototypeOf(Person)).toBe(Object.getPrototypeOf(eager));
    expect(Person).toBeInstanceOf(z.ZodMiniObject);
    expect(Object.keys(Person).sort()).toEqual(Object.keys(eager).sort());
  });

  it('inside other schemas: built when the outer one is, parsed through as if eager', () => {
    const build = vi.fn(buildPerson);
    const Person = deferred(build);
    const Team = deferred(() => z.object({ lead: Person, members: z.array(Person) }));
    const Named = deferred(() => z.extend(Person, { name: z.literal('ada') }));
    expect(build).not.toHaveBeenCalled();
    expect(Team.parse({ lead: { name: 'ada' }, members: [{ name: 'bob', age: 3 }] })).toEqual({ lead: { name: 'ada' }, members: [{ name: 'bob', age: 3 }] });
    const bad = Team.safeParse({ lead: { name: '' }, members: [] });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => i.path)).toEqual([['lead', 'name']]);
    expect(Named.safeParse({ name: 'bob' }).success).toBe(false);
    expect(Named.parse({ name: 'ada', age: 2 })).toEqual({ name: 'ada', age: 2 });
    expect(build).toHaveBeenCalledTimes(1);
  });

  it('an `in` test builds it too', () => {
    const build = vi.fn(buildPerson);
    const Person = deferred(build);
    expect('safeParse' in Person).toBe(true);
    expect(build).toHaveBeenCalledTimes(1);
  });
});

describe('the contract at import', () => {
  it('builds none of its schemas: each is an untouched stand-in until a request uses it', async () => {
    vi.resetModules();
    const contract = await import('../../lib/contract/index.js');
    const registry = await import('../../lib/registry/registration.js');
    const schemas = Object.entries({ ...contract, ...registry }).filter(([name]) => name.endsWith('Schema'));
    expect(schemas.length).toBeGreaterThan(40);
    // A built zod schema has its own `_zod`, `def`, `parse`…; a stand-in has no own property yet.
    expect(schemas.filter(([, schema]) => Reflect.ownKeys(schema as object).length > 0).map(([name]) => name)).toEqual([]);
    // …and is a schema as soon as it is used.
    expect(contract.ReconcileRequestSchema.safeParse({ clusterId: 'c1', items: [] }).success).toBe(false);
    expect(Reflect.ownKeys(contract.ReconcileRequestSchema)).toContain('_zod');
  });
});
