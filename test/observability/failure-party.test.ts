/**
 * Every failure reason the reconcilers write is placed on purpose: a refused input (the tenant's
 * to fix, counted apart and paged for by no alarm) or a system failure (the platform team's).
 * Read from lib/reconcile's source, so a reason added without a place fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { failureParty, REFUSED_INPUT_REASONS, SYSTEM_FAILURE_REASONS } from '../../lib/observability/failure-party.js';

const dir = new URL('../../lib/reconcile/', import.meta.url);
const source = readdirSync(dir)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => readFileSync(new URL(f, dir), 'utf8'))
  .join('\n');
/** Reason literals as the reconcilers write them: refuse('X', …), refuseSource(job, 'X', …), failed('X', …), fail('X'…), reason: 'X'. */
const written = new Set([...source.matchAll(/\b(?:refuse|failed|fail)\(\s*'([A-Z][A-Za-z]+)'|\brefuseSource\(\s*job,\s*'([A-Z][A-Za-z]+)'|\breason: '([A-Z][A-Za-z]+)'/g)].map((m) => m[1] ?? m[2] ?? m[3]!));

describe('failure reasons and whose they are', () => {
  it('every reason lib/reconcile writes -> in exactly one list; every listed reason is one it writes', () => {
    expect(written.size).toBeGreaterThan(40);
    const placed = [...written].filter((r) => REFUSED_INPUT_REASONS.has(r) !== SYSTEM_FAILURE_REASONS.has(r));
    expect([...written].filter((r) => !placed.includes(r))).toEqual([]);
    expect([...REFUSED_INPUT_REASONS, ...SYSTEM_FAILURE_REASONS].filter((r) => !written.has(r))).toEqual([]);
  });

  it("a tenant's bad StorageClass or a size over the limit -> input; IAM, ownership, capacity, an EC2 code nobody listed -> system", () => {
    expect(['InvalidStorageClass', 'NotAllowed', 'SnapshotNotFound', 'UnsupportedTopologyKey'].map(failureParty)).toEqual(['input', 'input', 'input', 'input']);
    expect(['UnauthorizedOperation', 'NotAdopted', 'InsufficientVolumeCapacity', 'SomeNewEc2Code'].map(failureParty)).toEqual(['system', 'system', 'system', 'system']);
  });
});
