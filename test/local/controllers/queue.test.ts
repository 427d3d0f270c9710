import { describe, expect, it } from 'vitest';
import { WorkQueue } from '../../../lib/local/controllers/queue.js';

describe('WorkQueue', () => {
  it('a key added twice before it is taken -> synced once', () => {
    const queue = new WorkQueue(() => {});
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect([queue.take(), queue.take(), queue.take()]).toEqual(['a', 'b', undefined]);
  });

  it('a key added again after it was taken -> waits again', () => {
    const queue = new WorkQueue(() => {});
    queue.add('a');
    queue.take();
    queue.add('a');
    expect(queue.take()).toBe('a');
  });

  it('addAfter -> the key arrives after the delay; clear cancels it', async () => {
    const queue = new WorkQueue(() => {});
    queue.addAfter('late', 5);
    expect(queue.size).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(queue.take()).toBe('late');
    queue.addAfter('x', 5);
    queue.clear();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(queue.size).toBe(0);
  });
});
