/** lib/contract is the floor: it imports nothing from the StorageClass rules (nor any other lib/ concept). */
import { describe, expect, it } from 'vitest';
import { importGraph } from '../import-graph.js';

describe("lib/contract's imports", () => {
  it('-> none leaves lib/contract for another folder of lib/ (lib/storageclass imports quantities from it, not the other way)', () => {
    const outside = [...importGraph('lib/contract')].flatMap(([from, targets]) =>
      targets.filter((t) => t.startsWith('lib/') && !t.startsWith('lib/contract/')).map((t) => `${from} -> ${t}`),
    );
    expect(outside).toEqual([]);
  });

  it('control: lib/storageclass is seen importing lib/contract', () => {
    const targets = [...importGraph('lib/storageclass').values()].flat();
    expect(targets).toContain('lib/contract/quantity.ts');
  });
});
