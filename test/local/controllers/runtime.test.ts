/** The shared machinery: watch-fed caches and the controller loop, over the real store. */
import { describe, expect, it } from 'vitest';
import { runController } from '../../../lib/local/controllers/controller.js';
import { Informers } from '../../../lib/local/controllers/index.js';
import { KubeApiError, createObjectStore } from '../../../lib/local/kube/index.js';
import { forCreate, node } from './fixtures.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 3000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe('Informers', () => {
  it('write to the store -> in the cache at once, frozen against accidental edits', () => {
    const store = createObjectStore();
    const informers = new Informers(store);
    expect(informers.list('nodes')).toEqual([]);
    store.create('nodes', forCreate(node('n1')));
    const cached = informers.get('nodes', 'n1');
    expect(cached?.metadata.name).toBe('n1');
    expect(() => {
      (cached!.metadata as { name: string }).name = 'x';
    }).toThrow(TypeError);
    store.delete('nodes', 'n1');
    expect(informers.get('nodes', 'n1')).toBeUndefined();
    informers.stop();
  });
});

describe('runController', () => {
  function start(sync: (key: string) => void, errors: unknown[]) {
    const store = createObjectStore();
    const informers = new Informers(store);
    const running = runController(
      informers,
      { name: 'test', watches: { nodes: ({ object }) => [object.metadata.name] }, keys: () => [], sync },
      { resyncIntervalMs: 1000, onError: (error) => errors.push(error), ownsInformers: true },
    );
    return { store, running };
  }

  it('burst of events about one object -> one sync', async () => {
    const synced: string[] = [];
    const { store, running } = start((key) => synced.push(key), []);
    const created = store.create('nodes', forCreate(node('n1')));
    store.update('nodes', { ...created, metadata: { ...created.metadata, labels: { a: 'b' } } });
    // Until the queue is drained, not for a while: a duplicate sync, however late, is seen.
    await running.idle();
    expect(synced).toEqual(['n1']);
    await running.stop();
  });

  it('sync fails with Conflict -> retried, not reported', async () => {
    const errors: unknown[] = [];
    let attempts = 0;
    const { store, running } = start(() => {
      attempts += 1;
      if (attempts < 3) throw new KubeApiError('Conflict', 'the object has been modified');
    }, errors);
    store.create('nodes', forCreate(node('n1')));
    await until(() => attempts >= 3, 'third attempt');
    await sleep(30);
    expect(attempts).toBe(3);
    expect(errors).toEqual([]);
    await running.stop();
  });

  it('sync fails unexpectedly -> reported and retried', async () => {
    const errors: unknown[] = [];
    let attempts = 0;
    const { store, running } = start(() => {
      attempts += 1;
      if (attempts === 1) throw new Error('boom');
    }, errors);
    store.create('nodes', forCreate(node('n1')));
    await until(() => attempts >= 2, 'second attempt');
    await sleep(30);
    expect(attempts).toBe(2);
    expect(errors).toEqual([new Error('boom')]);
    await running.stop();
  });
});
