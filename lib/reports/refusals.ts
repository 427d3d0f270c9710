/**
 * The requests of a cluster the backend refused, as the audit needs them: a refused request may
 * have carried what no stored report holds (a PV an administrator just made), so a deletion
 * rests only on a report received after the cluster's latest refusal (lib/audit/marks.ts). The
 * report store keeps, per cluster, when the backend last refused one and what it answered.
 *
 * Which refusals count: every answer of 400 or above to a request on a cluster's routes
 * (`/v1/clusters/<id>/reconcile`, `/v1/clusters/<id>/check`) whose path names a valid cluster
 * id — a bad signature or an unknown secret, a timestamp out of tolerance, a body signed for
 * another cluster, a broken or missing registration, a contract not served, a body too large,
 * malformed or refused by the contract, an internal error — save `409 replayed`: a replayed
 * webhook id was accepted once already, so what it carries is in the store. None of these can
 * be told from the forwarder's own request going wrong before its signature is checked, so an
 * unsigned request naming the id counts too: anyone who knows a cluster id can hold its
 * audit's deletions back (never make one happen), and the audit's reason names what was
 * refused and when. Only a cluster with a stored report records one (the stores write nothing
 * for any other id), so requests naming made-up ids cost no storage.
 */
import * as z from 'zod/mini';
import { deferred } from '../contract/deferred.js';
import { ClusterIdSchema } from '../registry/registration.js';

/** The latest refusal of a cluster's request that the store recorded. */
export const RefusalSchema = deferred(() =>
  z.object({
    /** When it was refused (epoch ms, the backend's clock). */
    at: z.number(),
    /** The answer's HTTP status and error code. */
    status: z.number(),
    code: z.string(),
  }),
);
export type Refusal = z.infer<typeof RefusalSchema>;

/**
 * How far the recorded refusal may lag the latest one: a store records a refusal only when the
 * one it holds is older than this (so a flood of refusals costs a write per cluster at most this
 * often), and the audit counts the recorded one as lasting this long after it.
 */
export const REFUSAL_RECORD_INTERVAL_MS = 60_000;

/** Whether a store holding `held` records a refusal at `at`: only one older by the interval is replaced. */
export function recordsRefusal(held: Refusal | undefined, at: number): boolean {
  return recordsRefusalAt(held?.at, at);
}

/** The same rule on the held refusal's time alone (a store that remembers only when it wrote one). */
export function recordsRefusalAt(heldAt: number | undefined, at: number): boolean {
  return heldAt === undefined || heldAt <= at - REFUSAL_RECORD_INTERVAL_MS;
}

/** The status no refusal counts with: a replayed webhook id was accepted once already. */
const REPLAYED_STATUS = 409;
const CLUSTER_ROUTE = /^\/v1\/clusters\/([^/]+)\/(reconcile|check)$/;

/** The refusal to record of an answer `status` `code` at `at` to a request on `path`, if it is one that counts (above). */
export function refusalOf(path: string, status: number, code: string, at: number): { clusterId: string; refusal: Refusal } | undefined {
  if (status < 400 || status === REPLAYED_STATUS) return undefined;
  const clusterId = CLUSTER_ROUTE.exec(path)?.[1];
  if (clusterId === undefined || !ClusterIdSchema.safeParse(clusterId).success) return undefined;
  return { clusterId, refusal: { at, status, code } };
}

/**
 * Records the refusal of an answer, if it counts. Never throws: the answer goes out whatever
 * the store does; a store that fails is told on stderr (the audit then sees no refusal, and
 * still deletes only on a report at most two resyncs old).
 */
export async function noteRefusal(
  store: { refused(clusterId: string, refusal: Refusal): Promise<void> },
  answer: { path: string; status: number; code: string; at: number },
): Promise<void> {
  const found = refusalOf(answer.path, answer.status, answer.code, answer.at);
  if (!found) return;
  try {
    await store.refused(found.clusterId, found.refusal);
  } catch (err) {
    console.error(JSON.stringify({ level: 'ERROR', message: 'refusal not recorded', clusterId: found.clusterId, error: String(err instanceof Error ? err.message : err) }));
  }
}
