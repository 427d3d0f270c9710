/** lib/forwarder's modules import one another without circles (a regex walk of their imports). */
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph } from '../import-graph.js';

describe("lib/forwarder's import graph", () => {
  it('-> no module imports itself back, directly or around a circle', () => {
    const graph = importGraph('lib/forwarder');
    expect(graph.get('lib/forwarder/kube/clients.ts')).toBeDefined();
    expect(importCycles(graph)).toEqual([]);
  });

  it('control: a circle of two, such as clients.ts ⇄ leader-election.ts was, is found', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['a.ts', 'c.ts']],
      ['c.ts', []],
    ]);
    expect(importCycles(graph)).toEqual([['a.ts', 'b.ts', 'a.ts']]);
  });
});
