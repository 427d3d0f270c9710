/**
 * One batch's round trip: build the items from the caches, post them signed, apply each
 * result's writes, and say how each key's turn ended. Never throws: whatever goes wrong
 * becomes a completion, so no key is ever lost.
 */
import * as z from 'zod/mini';
import { ItemSchema, type EventInvolvedObject, type ForwarderVersions, type ItemInput, type ObjectRef, type Result, type Write } from '../contract/index.js';
import { applyWrites, WriteError } from '../kube/apply-writes.js';
import type { KubeClients } from '../kube/clients.js';
import { forbiddenRequest, isApiError } from '../kube/errors.js';
import { BackendRequestError, postReconcile, resultsOfKeys, type FetchLike, type RequestCodings } from './backend-client.js';
import { requestChunks } from './request-chunks.js';
import type { ForwarderConfig } from './config.js';
import { BackendChoice, isUnavailability } from './failover.js';
import type { DeletedClaim } from './items.js';
import type { Logger } from './logger.js';
import type { ForwarderMetrics } from './metrics.js';
import type { Completion } from './queue.js';
import type { RefusalSurface } from './refusal-surface.js';
import type { SecretSource } from './secret.js';

/** Writes applied concurrently within one batch's results. */
const WRITE_CONCURRENCY = 8;

export interface BatchSenderDeps {
  config: Pick<ForwarderConfig, 'apiUrl' | 'clusterId' | 'requestTimeoutMs'>;
  /**
   * The backends and the one in use (failover.ts); default `config.apiUrl` alone. A request the
   * one in use leaves unanswered (no answer, 5xx) goes at once to the next; a refusal does not.
   */
  backends?: BackendChoice;
  clients: KubeClients;
  metrics: ForwarderMetrics;
  logger: Logger;
  secret: SecretSource;
  fetch: FetchLike;
  signal: AbortSignal;
  /** What the requests say of this forwarder; default this build's (backend-client.ts). */
  versions?: ForwarderVersions;
  /**
   * Whether bodies may go gzip'd to a backend (learnt from its answers); none: never. A batch is
   * cut for the one in use; one that moves on to a backend that takes no gzip goes plain (if then
   * too large, its 413 has it retried, cut anew).
   */
  codings?: (apiUrl: string) => RequestCodings;
  /**
   * Told of every request refused or served (refusal-surface.ts). On the contract's 426 retrying
   * cannot help: the keys of the request settle as errors, and it stops the sending.
   */
  refusals?: Pick<RefusalSurface, 'refused' | 'served' | 'contractRefused'>;
  /** Told when a request moves on to another backend (metrics). */
  onSwitch?(url: string): void;
  /** The item for a key from the caches now; undefined when its object is gone or not ours. */
  buildItem(key: string, payload: DeletedClaim | undefined): ItemInput | undefined | Promise<ItemInput | undefined>;
}

export function createBatchSender(deps: BatchSenderDeps) {
  const { config, metrics, logger } = deps;
  const backends = deps.backends ?? new BackendChoice([config.apiUrl]);

  return async function sendBatch(
    keys: readonly string[],
    payloads: ReadonlyMap<string, DeletedClaim>,
  ): Promise<Map<string, Completion>> {
    const completions = new Map<string, Completion>();
    const sentKeys: string[] = [];
    const items: ItemInput[] = [];
    for (const key of keys) {
      const item = await deps.buildItem(key, payloads.get(key));
      if (!item) {
        completions.set(key, { type: 'forget' });
        continue;
      }
      // One malformed object must not get the whole batch refused with a 400.
      const checked = ItemSchema.safeParse(item);
      if (!checked.success) {
        logger.warn('object does not fit the contract; not sent, retried with backoff', {
          key,
          problem: z.prettifyError(checked.error),
        });
        metrics.outcomes.inc({ kind: kindOf(key), outcome: 'invalid' });
        completions.set(key, { type: 'error' });
        continue;
      }
      sentKeys.push(key);
      items.push(item);
    }
    const { chunks, oversized } = requestChunks(items, config.clusterId, deps.codings?.(backends.active()).gzip ?? false);
    for (const i of oversized) {
      const key = sentKeys[i] as string;
      logger.error('object is too large for one request; not sent, retried with backoff', { key });
      metrics.outcomes.inc({ kind: kindOf(key), outcome: 'invalid' });
      completions.set(key, { type: 'error' });
    }
    for (const chunk of chunks) {
      await send(chunk.map((i) => sentKeys[i] as string), chunk.map((i) => items[i] as ItemInput), completions);
    }
    return completions;
  };

  async function send(sentKeys: string[], items: ItemInput[], completions: Map<string, Completion>): Promise<void> {
    metrics.requestsInFlight.inc();
    const endTimer = metrics.requestDuration.startTimer();
    let matched: Map<string, Result>;
    try {
      const { status, results } = await postToBackends(items);
      matched = resultsOfKeys(sentKeys, results, status);
      endTimer({ status: String(status) });
      deps.refusals?.served();
    } catch (err) {
      const status = err instanceof BackendRequestError ? err.status : undefined;
      endTimer({ status: status === undefined ? 'error' : String(status) });
      const fields = { items: items.length, err: err instanceof Error ? err.message : String(err), status };
      const refusal = err instanceof BackendRequestError ? err.refusal : undefined;
      if (refusal) {
        // Said once, by the forwarder, which stops sending (its readiness names the fix).
        deps.refusals?.contractRefused(refusal);
      } else if (err instanceof BackendRequestError && err.kind === 'response') {
        // A 2xx that is not the backend's answer: a proxy's page, another service at the URL.
        logger.error("the backend's answer is unusable; check VOLHOOK_API_URL and any proxy in front of the backend", fields);
      } else if (status !== undefined && status >= 400 && status < 500) {
        // The backend refused the whole request: a wrong secret, cluster id or URL. Nothing
        // will get through until someone fixes it; the items wait with backoff.
        logger.error('backend REFUSED the request; check VOLHOOK_CLUSTER_ID, the secret and VOLHOOK_API_URL', fields);
        if (status === 401 || status === 403) void deps.secret.reload();
      } else {
        logger.warn('backend unavailable; items will be retried with backoff', fields);
      }
      if (!refusal && err instanceof BackendRequestError) await deps.refusals?.refused(err, items);
      for (const key of sentKeys) {
        completions.set(key, { type: 'error' });
        metrics.outcomes.inc({ kind: kindOf(key), outcome: 'error' });
      }
      return;
    } finally {
      metrics.requestsInFlight.dec();
    }

    await eachLimit(sentKeys, WRITE_CONCURRENCY, async (key) => {
      const result = matched.get(key) as Result;
      metrics.outcomes.inc({ kind: kindOf(key), outcome: result.outcome });
      if (!(await applyResultWrites(key, result))) {
        completions.set(key, { type: 'error' });
        return;
      }
      completions.set(key, completionOf(result));
      if (result.outcome === 'failed') logger.warn('reconcile failed', { key, reason: result.reason, message: result.message });
      else logger.debug('reconciled', { key, outcome: result.outcome, writes: result.writes.length });
    });
  }

  /**
   * Posts to the backend in use; when it is unavailable, to each other one in turn (a new
   * signature and webhook id each time: every backend records the ids it accepts). Throws the
   * last error: a refusal at once, unavailability once every backend was tried.
   */
  async function postToBackends(items: ItemInput[]): Promise<{ status: number; results: Result[] }> {
    const order = backends.order();
    for (const [i, apiUrl] of order.entries()) {
      try {
        const answer = await postReconcile(
          {
            apiUrl,
            clusterId: config.clusterId,
            secret: deps.secret.current,
            fetch: deps.fetch,
            timeoutMs: config.requestTimeoutMs,
            signal: deps.signal,
            ...(deps.versions && { versions: deps.versions }),
            ...(deps.codings && { codings: deps.codings(apiUrl) }),
          },
          items,
        );
        backends.served(apiUrl);
        return answer;
      } catch (err) {
        const next = order[i + 1];
        if (!(err instanceof BackendRequestError) || !isUnavailability(err) || next === undefined || deps.signal.aborted) throw err;
        backends.unavailable(apiUrl);
        logger.warn('backend unavailable; the request goes to the next backend', { from: apiUrl, to: next, items: items.length, err: err.message, status: err.status });
        deps.onSwitch?.(next);
      }
    }
    throw new Error('unreachable: no backend to send to');
  }

  /**
   * Applies the writes of a result; false when one could not be applied.
   *
   * Who applies writes is configured in one place: the cluster's registration (`writeBack`).
   * With `forwarder` the backend answers with the writes and the forwarder applies them; with
   * `direct` it applies them itself and answers with none. So writes in an answer always mean
   * "apply these", and the forwarder has no setting of its own: it once had one
   * (VOLHOOK_WRITE_BACK), and a forwarder set to `none` for a cluster registered with
   * `forwarder` dropped the PV create and marked the claim done.
   *
   * A write that cannot be applied (a ClusterRole without the permission, an API server that
   * refuses the object) is never `done`: it is logged at error level, counted in
   * `volhook_forwarder_write_failures_total`, and the key retried with backoff.
   */
  async function applyResultWrites(key: string, result: Result): Promise<boolean> {
    if (result.writes.length === 0) return true;
    try {
      await applyWrites(deps.clients, result.writes);
      return true;
    } catch (err) {
      const op = err instanceof WriteError ? err.write.op : 'unknown';
      metrics.writeFailures.inc({ op });
      // A refusal by RBAC names what was refused, so the missing rule is plain from the line.
      const forbidden = forbiddenRequest(err instanceof WriteError ? err.cause : err);
      logger.error('writes could not be applied; the item is retried with backoff', {
        key,
        op,
        err: err instanceof Error ? err.message : String(err),
        ...(isForbidden(err) && {
          status: 403,
          ...forbidden,
          hint: "the forwarder's ServiceAccount may not make this write: upgrade the forwarder's chart release (its roles are charts/volhook-forwarder/templates/rbac.yaml)",
        }),
      });
      // Where there is an object, the operator also sees it there (best effort: a forwarder
      // refused the write may well be refused the Event too).
      const event = err instanceof WriteError ? writeFailedEvent(err) : undefined;
      if (event) await applyWrites(deps.clients, [event]).catch(() => undefined);
      return false;
    }
  }
}

/** A Warning Event on the object a failed write was for; none for a failed Event itself. */
export function writeFailedEvent(err: WriteError): Write | undefined {
  const target = writeTarget(err.write);
  if (!target) return undefined;
  const { kind, name, namespace, uid } = target;
  const involvedObject: EventInvolvedObject = {
    kind,
    apiVersion: kind === 'VolumeAttachment' ? 'storage.k8s.io/v1' : 'v1',
    name,
    ...(namespace && { namespace }),
    ...(uid && { uid }),
  };
  return { op: 'createEvent', involvedObject, type: 'Warning', reason: 'WriteBackFailed', message: `volhook could not apply ${err.message}` };
}

/** The object a write was for: for a PV create, the claim it was made for (the PV is not there). */
function writeTarget(write: Write): ObjectRef | undefined {
  switch (write.op) {
    case 'createPersistentVolume': {
      const { claimRef } = write.pv.spec;
      return { kind: 'PersistentVolumeClaim', name: claimRef.name, namespace: claimRef.namespace, ...(claimRef.uid && { uid: claimRef.uid }) };
    }
    case 'deletePersistentVolume':
      return { kind: 'PersistentVolume', name: write.name, uid: write.uid };
    case 'addFinalizer':
    case 'removeFinalizer':
    case 'setAnnotation':
      return write.target;
    case 'updateVolumeAttachmentStatus':
      return { kind: 'VolumeAttachment', name: write.name, ...(write.uid && { uid: write.uid }) };
    case 'removePvcAnnotation':
      return { kind: 'PersistentVolumeClaim', name: write.name, namespace: write.namespace, ...(write.uid && { uid: write.uid }) };
    case 'createEvent':
      return undefined;
  }
}

function isForbidden(err: unknown): boolean {
  return isApiError(err instanceof WriteError ? err.cause : err, 403);
}

/** How a backend result ends the key's turn (once its writes are applied). */
export function completionOf(result: Result): Completion {
  switch (result.outcome) {
    case 'done':
      return result.reportWithinSeconds === undefined ? { type: 'done' } : { type: 'done', reportWithinSeconds: result.reportWithinSeconds };
    case 'requeue':
      return { type: 'requeue', afterMs: result.requeueAfterSeconds * 1000 };
    case 'failed':
      return result.requeueAfterSeconds === undefined ? { type: 'failed' } : { type: 'failed', afterMs: result.requeueAfterSeconds * 1000 };
  }
}

function kindOf(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

async function eachLimit<T>(values: readonly T[], limit: number, fn: (value: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < values.length) await fn(values[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, values.length) }, worker));
}

export { chunkBySize } from './request-chunks.js';
