import { EC2Client, type EC2ClientConfig } from '@aws-sdk/client-ec2';

/**
 * Attempts per EC2 call, the first included. The SDK retries throttling, 5xx, timeouts and
 * network errors; its throttling back-off is jittered with a 1 s base doubling per retry, so
 * 3 attempts wait at most ~1 s + ~2 s. More attempts
 * would not fit inside API Gateway's 30 s, and they are not needed: a call that still fails
 * becomes a `transient` Ec2Error, the reconciler answers `requeue`, and the forwarder retries
 * the item later — which is gentler on a throttled account than retrying here.
 */
export const DEFAULT_MAX_ATTEMPTS = 3;
/**
 * Per attempt, for the whole request and response. EC2 answers a DescribeVolumes of 500
 * volumes or a CreateVolume in well under 2 s; 5 s leaves room for a slow answer while a
 * hung one is cut off early enough to retry it.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;
/** Per attempt, TCP connect only. Within a Region that takes milliseconds. */
export const DEFAULT_CONNECTION_TIMEOUT_MS = 1_000;

export interface Ec2ClientOptions {
  region: string;
  /** E.g. the local EC2 simulator's URL; default: the Region's EC2 endpoint. */
  endpoint?: string;
  /** Attempts per call, the first included (default {@link DEFAULT_MAX_ATTEMPTS}). */
  maxAttempts?: number;
  requestTimeoutMs?: number;
  connectionTimeoutMs?: number;
  /** Default: the SDK's provider chain (the Lambda role's credentials). */
  credentials?: EC2ClientConfig['credentials'];
  /** Replaces the HTTP transport; tests use it to script EC2's answers without a network. */
  requestHandler?: EC2ClientConfig['requestHandler'];
}

/**
 * The EC2 client for the backend. Make one per process (module scope of the Lambda), not per
 * request, so connections are reused.
 *
 * Retry mode `standard`, not `adaptive`: the adaptive mode's client-side rate limiter is one
 * token bucket for every action of the client, while EC2 throttles each action in its own
 * bucket, so CreateVolume throttling held back DescribeVolumes and AttachVolume too, past the
 * request deadline (the README has the figures of `npm run bench`). Waiting belongs to the
 * forwarder anyway: a call still throttled after its retries becomes a requeue with backoff
 * there.
 *
 * Worst case for one call: 3 × (1 s connect + 5 s request) + ~3 s back-off ≈ 21 s. That alone
 * would come close to API Gateway's 30 s, so the
 * hard bound is the gateway's `deadline` (see {@link createEc2Gateway}), which aborts a call
 * in flight — use e.g. `deadline: receivedAt + 20_000`.
 */
export function createEc2Client(options: Ec2ClientOptions): EC2Client {
  return new EC2Client({
    region: options.region,
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    retryMode: 'standard',
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    requestHandler: options.requestHandler ?? {
      requestTimeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      // Without this the SDK only logs a warning when requestTimeout passes.
      throwOnRequestTimeout: true,
      connectionTimeout: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    },
  });
}
