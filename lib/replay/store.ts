/**
 * Replay protection as Standard Webhooks recommends: a webhook id is accepted once for as
 * long as its signed timestamp is inside the tolerance window. After that the signature check
 * refuses the request by its timestamp, so the id need not be remembered any longer.
 */
import { SIGNATURE_TOLERANCE_SECONDS } from '../contract/index.js';

export interface ReplayStore {
  /**
   * Records `key` until `expiresAt` (epoch seconds). True when the key was not recorded yet,
   * or only with an expiry before `now` (epoch seconds); false when it is a replay.
   */
  recordOnce(key: string, expiresAt: number, now: number): Promise<boolean>;
}

/** Ids are per cluster: `<clusterId>#<webhook-id>`. */
export function replayKey(clusterId: string, webhookId: string): string {
  return `${clusterId}#${webhookId}`;
}

/** The last second at which a request signed at `timestamp` still passes the timestamp check. */
export function replayExpiry(timestamp: number): number {
  return timestamp + SIGNATURE_TOLERANCE_SECONDS;
}
