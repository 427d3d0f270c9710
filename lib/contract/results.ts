/** What the backend answers: one result per item, in the order of the items. */
import * as z from 'zod/mini';
import { deferred } from './deferred.js';
import { WriteSchema } from './writes.js';

// A function, so that the write schemas are built with a result schema, not at import.
const common = () => ({
  /** `itemKey` of the item this result answers. */
  key: z.string(),
  /** Writes to apply, in order, before acting on the outcome. */
  writes: z.array(WriteSchema),
});

export const DoneResultSchema = deferred(() => z.object({
  ...common(),
  outcome: z.literal('done'),
  /** Why, when the backend destroyed something (e.g. the disk of a claim deleted before its PV). */
  message: z.optional(z.string()),
  /**
   * Answering a VolumeReport item: the backend needs the cluster's next report (or its digest)
   * within this long, not every resync (nothing it keeps rests on the report's freshness now).
   * Absent: every resync. The forwarder waits no longer than REPORT_WITHIN_MAX_SECONDS, whatever
   * it is told, and sends a report that changed at once.
   */
  reportWithinSeconds: z.optional(z.number().check(z.positive())),
}));

/** Progress is being made (a volume is creating, an attachment in flight, EC2 throttled). */
export const RequeueResultSchema = deferred(() => z.object({
  ...common(),
  outcome: z.literal('requeue'),
  requeueAfterSeconds: z.number().check(z.nonnegative()),
  message: z.optional(z.string()),
}));

/** The object cannot progress as it is (bad parameter, ownership, capacity); retried slowly. */
export const FailedResultSchema = deferred(() => z.object({
  ...common(),
  outcome: z.literal('failed'),
  reason: z.string().check(z.minLength(1)),
  message: z.string(),
  requeueAfterSeconds: z.optional(z.number().check(z.nonnegative())),
}));

export const ResultSchema = deferred(() => z.discriminatedUnion('outcome', [
  DoneResultSchema,
  RequeueResultSchema,
  FailedResultSchema,
]));
export type Result = z.infer<typeof ResultSchema>;
export type Outcome = Result['outcome'];

export const ReconcileResponseSchema = deferred(() => z.object({ results: z.array(ResultSchema) }));
export type ReconcileResponse = z.infer<typeof ReconcileResponseSchema>;

/** The body of every 4xx/5xx answer. */
export const ErrorResponseSchema = deferred(() => z.object({
  error: z.object({ code: z.string(), message: z.string() }),
}));
export type ErrorResponse = z.infer<typeof ErrorResponseSchema>;
