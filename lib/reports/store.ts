/**
 * Where the backend keeps each cluster's latest volume report (lib/contract/report.ts) — the
 * one piece of cluster state the audit needs and the stateless functions cannot hold in
 * memory: DynamoDB when deployed, a directory of JSON files for the local stack and the CLI,
 * memory for tests. Also the Warning Events an audit leaves for the cluster (lost volumes),
 * handed to the forwarder with the answer to its next report.
 */
import * as z from 'zod/mini';
import { deferred } from '../contract/deferred.js';
import { VolumeReportSchema, WriteSchema, type Write } from '../contract/index.js';

export const StoredReportSchema = deferred(() => z.object({
  clusterId: z.string().check(z.minLength(1)),
  digest: z.string(),
  /** When the forwarder saw the cluster so (epoch ms of the signed request that carried it or confirmed it). */
  observedAt: z.number(),
  report: VolumeReportSchema,
}));
export type StoredReport = z.infer<typeof StoredReportSchema>;

/** One part of a report sent in parts (lib/contract/report.ts `splitReport`), kept until all of its digest are in. */
export const StoredReportPartSchema = deferred(() => z.object({
  clusterId: z.string().check(z.minLength(1)),
  /** The digest of the whole report the part belongs to. */
  digest: z.string(),
  index: z.number(),
  count: z.number(),
  observedAt: z.number(),
  report: VolumeReportSchema,
}));
export type StoredReportPart = z.infer<typeof StoredReportPartSchema>;

/** What `complete` throws when a part of the report is not in the store (every store says it so). */
export function partsMissing(clusterId: string, digest: string): Error {
  return new Error(`the volume report ${digest} of cluster "${clusterId}" is not all kept: parts are missing`);
}

export const PendingEventsSchema = deferred(() => z.array(WriteSchema));

export interface ReportStore {
  get(clusterId: string): Promise<StoredReport | undefined>;
  /**
   * Keeps `report` unless the stored one was observed later: a request that arrives late never
   * replaces a newer report. True when stored.
   */
  put(report: StoredReport): Promise<boolean>;
  /**
   * The cluster still looks as the stored report says, as of `observedAt`: moves its
   * `observedAt` on when its digest is `digest`. False when no report with that digest is
   * stored (the forwarder must send the whole report).
   */
  confirm(clusterId: string, digest: string, observedAt: number): Promise<boolean>;
  /**
   * Keeps one part of a report sent in parts, under its digest (parts of other digests are
   * kept apart). Answers how many distinct parts of that digest are kept now.
   */
  putPart(part: StoredReportPart): Promise<number>;
  /** The kept parts of the report `digest`, by index (0 … count-1); undefined where one is missing. */
  parts(clusterId: string, digest: string, count: number): Promise<(StoredReportPart | undefined)[]>;
  /**
   * The report `digest`, every one of whose `count` parts is kept and checked to make up that
   * digest, becomes the cluster's report unless the stored one was observed later (as `put`),
   * and its parts are let go. True when it did.
   */
  complete(clusterId: string, digest: string, count: number, observedAt: number): Promise<boolean>;
  /** Adds Events for the cluster to record; they go out with the answer to its next report. */
  queueEvents(clusterId: string, events: Write[]): Promise<void>;
  /** The queued Events, removed from the store. */
  takeEvents(clusterId: string): Promise<Write[]>;
  /** Every cluster with a stored report: the ones the scheduled audit can look at. */
  clusters(): Promise<string[]>;
}
