/**
 * Where the backend keeps each cluster's latest volume report (lib/contract/report.ts) — the
 * one piece of cluster state the audit needs and the stateless functions cannot hold in
 * memory: DynamoDB when deployed, a directory of JSON files for the local stack and the CLI,
 * memory for tests. Also the Warning Events an audit leaves for the cluster (lost volumes),
 * handed to the forwarder with the answer to its next report; the audit's marks (the deletion
 * candidates it found, and since when); and the disks and snapshots whose last known PV or
 * content had the Retain policy after no report names them any more; and when the backend last
 * refused a request of the cluster (lib/reports/refusals.ts); and when it last verified a request
 * of the cluster with each of its secrets (lib/reports/verified-by.ts).
 */
import * as z from 'zod/mini';
import { deferred } from '../contract/deferred.js';
import { VolumeReportSchema, WriteSchema, type Write } from '../contract/index.js';
import type { Refusal } from './refusals.js';
import type { VerifiedBy } from './verified-by.js';

export const StoredReportSchema = deferred(() => z.object({
  clusterId: z.string().check(z.minLength(1)),
  digest: z.string(),
  /** When the forwarder saw the cluster so (epoch ms of the signed request that carried it or confirmed it): the sender's clock. */
  observedAt: z.number(),
  /**
   * When the backend received it (epoch ms, the backend's clock): of a report in parts, its
   * first part, since the forwarder read the whole before sending any. 0 in a report kept
   * before the backend recorded it: such a report speaks for no time ({@link reportTime}).
   */
  receivedAt: z._default(z.number(), 0),
  report: VolumeReportSchema,
}));
export type StoredReport = z.infer<typeof StoredReportSchema>;

/**
 * The time a report speaks for, as the audit dates it: the sender's time, but never later than
 * when the backend received it — a forwarder whose clock is fast cannot make its report newer
 * than it is.
 */
export function reportTime(stored: Pick<StoredReport, 'observedAt' | 'receivedAt'>): number {
  return Math.min(stored.observedAt, stored.receivedAt);
}

/** One part of a report sent in parts (lib/contract/report.ts `splitReport`), kept until all of its digest are in. */
export const StoredReportPartSchema = deferred(() => z.object({
  clusterId: z.string().check(z.minLength(1)),
  /** The digest of the whole report the part belongs to. */
  digest: z.string(),
  index: z.number(),
  count: z.number(),
  observedAt: z.number(),
  /** When the backend first received this part (a part sent again keeps it). */
  receivedAt: z._default(z.number(), 0),
  report: VolumeReportSchema,
}));
export type StoredReportPart = z.infer<typeof StoredReportPartSchema>;

/** What `complete` throws when a part of the report is not in the store (every store says it so). */
export function partsMissing(clusterId: string, digest: string): Error {
  return new Error(`the volume report ${digest} of cluster "${clusterId}" is not all kept: parts are missing`);
}

export const PendingEventsSchema = deferred(() => z.array(WriteSchema));

/**
 * The IDs the store keeps marks and retained resources under: EC2's volume and snapshot IDs
 * (the file store makes file names of them). Any other ID names no disk or snapshot the
 * audit could delete, and is not kept.
 */
export const RESOURCE_ID = /^(vol|snap)-[0-9a-f]{1,32}$/;

export interface ReportStore {
  get(clusterId: string): Promise<StoredReport | undefined>;
  /**
   * Keeps `report` unless the stored one was observed later: a request that arrives late never
   * replaces a newer report. True when stored.
   */
  put(report: StoredReport): Promise<boolean>;
  /**
   * The cluster still looks as the stored report says, as of `observedAt`: when its digest is
   * `digest` and `observedAt` is not earlier than the stored one, moves `observedAt` on, and
   * `receivedAt` to the given one (a fresh reading, received then; not given: a part of an
   * earlier reading sent again, whose receipt dates nothing). False when no report with that
   * digest is stored (the forwarder must send the whole report).
   */
  confirm(clusterId: string, digest: string, observedAt: number, receivedAt?: number): Promise<boolean>;
  /**
   * Keeps one part of a report sent in parts, under its digest (parts of other digests are
   * kept apart); a part kept already keeps the `receivedAt` it was first received at. Answers
   * how many distinct parts of that digest are kept now.
   */
  putPart(part: StoredReportPart): Promise<number>;
  /** The kept parts of the report `digest`, by index (0 … count-1); undefined where one is missing. */
  parts(clusterId: string, digest: string, count: number): Promise<(StoredReportPart | undefined)[]>;
  /**
   * The report `digest`, every one of whose `count` parts is kept and checked to make up that
   * digest, becomes the cluster's report unless the stored one was observed later (as `put`),
   * and its parts are let go. True when it did.
   */
  complete(clusterId: string, digest: string, count: number, observedAt: number, receivedAt: number): Promise<boolean>;
  /** Adds Events for the cluster to record; they go out with the answer to its next report. */
  queueEvents(clusterId: string, events: Write[]): Promise<void>;
  /** The queued Events, removed from the store. */
  takeEvents(clusterId: string): Promise<Write[]>;
  /** Every cluster with a stored report: the ones the scheduled audit can look at. */
  clusters(): Promise<string[]>;
  /** The audit's marks of the cluster: resource ID → when it was first marked a deletion candidate (epoch ms). */
  marks(clusterId: string): Promise<Map<string, number>>;
  /** Marks resources; one marked already keeps its earlier mark. IDs not {@link RESOURCE_ID} are refused. */
  mark(clusterId: string, marks: ReadonlyMap<string, number>): Promise<void>;
  /** Drops the marks of these resources (those without one are no error). */
  unmark(clusterId: string, ids: readonly string[]): Promise<void>;
  /** Disks and snapshots whose last known PV or content had the Retain policy, kept for the user after it went. */
  retained(clusterId: string): Promise<Set<string>>;
  /** Adds resources to the retained ones. IDs not {@link RESOURCE_ID} are refused. */
  retain(clusterId: string, ids: readonly string[]): Promise<void>;
  /** Removes resources from the retained ones (a PV of another policy names one now, it is gone, or the operator deleted it). */
  release(clusterId: string, ids: readonly string[]): Promise<void>;
  /**
   * A request of the cluster was refused: recorded only for a cluster with a stored report, and
   * only when the refusal held is older by REFUSAL_RECORD_INTERVAL_MS (`recordsRefusal`), so
   * the one held lags the latest by at most that.
   */
  refused(clusterId: string, refusal: Refusal): Promise<void>;
  /** The latest refusal recorded for the cluster. */
  lastRefusal(clusterId: string): Promise<Refusal | undefined>;
  /**
   * A request of the cluster was verified with the secret `fingerprint` at `at` (the backend's
   * clock): recorded only when the time held for that fingerprint is older by
   * VERIFIED_RECORD_INTERVAL_MS (`recordsVerification`). A key not a fingerprint is refused.
   */
  verifiedWith(clusterId: string, fingerprint: string, at: number): Promise<void>;
  /** Per secret fingerprint, when a request of the cluster was last verified with it (as recorded). */
  verifiedBy(clusterId: string): Promise<VerifiedBy>;
}

/** What `mark` and `retain` throw for an ID that is not a volume's or a snapshot's. */
export function checkResourceIds(ids: Iterable<string>): void {
  for (const id of ids) if (!RESOURCE_ID.test(id)) throw new Error(`not an EBS volume or snapshot ID: "${id.slice(0, 80)}"`);
}
