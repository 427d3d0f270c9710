/**
 * How old a request may be for the backend to make or attach a disk from it. A request's items
 * are built when it is sent, so an older one was delayed, or outlived a forwarder that
 * restarted, or was captured and sent again: its claim may have been deleted since (a late
 * CreateVolume leaks a disk), or its VolumeAttachment deleted and the disk detached (a late
 * AttachVolume attaches it again, for nobody). The replay store refuses a request seen before
 * only within the signature's 5 minutes; this bound is tighter, and dated by the backend's
 * clock against the signed timestamp.
 */
import type { ReconcileContext } from './context.js';
import { Requeue } from './outcomes.js';
import { requeue, type Settled } from './plan.js';

/** CreateVolume and AttachVolume are made only from a request signed at most this long ago. */
export const FRESH_REQUEST_SECONDS = 60;

/**
 * Pure: a requeue at once when the request is older than {@link FRESH_REQUEST_SECONDS} (the
 * forwarder sends the item again, freshly signed), undefined when it is fresh. `made` says
 * what is made only from a fresh request: "a volume is created".
 */
export function staleRequest(ctx: Pick<ReconcileContext, 'now' | 'signedAt'>, made: string): Settled | undefined {
  const age = (ctx.now().getTime() - ctx.signedAt.getTime()) / 1000;
  if (age <= FRESH_REQUEST_SECONDS) return undefined;
  return requeue(Requeue.recorded, `the request was signed ${Math.round(age)} s ago; ${made} only from a request at most ${FRESH_REQUEST_SECONDS} s old`);
}
