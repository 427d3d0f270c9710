/**
 * The request's correlation id: the one every error log line of a request carries and the
 * answer echoes in `x-volhook-request-id`, so an operator can find a forwarder's request in
 * the backend's logs (and API Gateway's). First found wins: the request's `webhook-id` (the
 * forwarder logs it; unverified, it is only a name to search by), API Gateway's request id,
 * one made up here.
 */
import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';

export const REQUEST_ID_HEADER = 'x-volhook-request-id';

/** What hono/aws-lambda passes as the app's env: the API Gateway event, of which only its id is read. */
const LambdaEnvSchema = z.object({ event: z.object({ requestContext: z.object({ requestId: z.string().check(z.minLength(1)) }) }) });

/** What one request is known by in the logs. */
export interface Correlation {
  requestId: string;
  /** The cluster the path names, as written (absent: not a cluster's path). */
  clusterId?: string;
}

/** Picks the request's id and cluster from its path, headers and runtime env; pure but for `generate`. */
export function correlationOf(
  request: { path: string; headers: Headers; env: unknown },
  generate: () => string = randomUUID,
): Correlation {
  const webhookId = request.headers.get('webhook-id') ?? '';
  const lambda = LambdaEnvSchema.safeParse(request.env);
  // A header is the sender's text: kept short and printable, so that it cannot break a log line.
  const requestId = printable(webhookId) || (lambda.success ? lambda.data.event.requestContext.requestId : '') || generate();
  const clusterId = /^\/v1\/clusters\/([^/]+)(?:\/|$)/.exec(request.path)?.[1];
  return { requestId, ...(clusterId !== undefined && { clusterId: decodeSafely(clusterId) }) };
}

function printable(value: string): string {
  return /^[\x21-\x7e]{1,128}$/.test(value) ? value : '';
}

function decodeSafely(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
