/**
 * Which secrets a cluster's requests are still signed with, as `rotate-secret --finish` needs
 * it: the report store keeps, per cluster and secret fingerprint (lib/contract/signing.ts
 * `secretFingerprint`), when the backend last verified a request with that secret (its clock).
 * Kept as cheaply as the latest refusal (lib/reports/refusals.ts): a store records a time only
 * when the one it holds for that fingerprint is older by VERIFIED_RECORD_INTERVAL_MS, so the
 * held time lags the latest by at most that, and a busy cluster costs at most one write per
 * fingerprint a minute.
 */
import * as z from 'zod/mini';
import { deferred } from '../contract/deferred.js';

/** Fingerprint → when the backend last verified a request signed with that secret (epoch ms, the backend's clock). */
export const VerifiedBySchema = deferred(() => z.record(z.string().check(z.regex(FINGERPRINT)), z.number()));
export type VerifiedBy = z.infer<typeof VerifiedBySchema>;

/** What `secretFingerprint` makes: a store keeps nothing under any other key. */
export const FINGERPRINT = /^sha256:[0-9a-f]{12}$/;

/** How far a recorded time may lag the latest verification (the same bound as a refusal's). */
export const VERIFIED_RECORD_INTERVAL_MS = 60_000;

/** Whether a store holding `held` for a fingerprint records a verification at `at`. */
export function recordsVerification(held: number | undefined, at: number): boolean {
  return held === undefined || held <= at - VERIFIED_RECORD_INTERVAL_MS;
}

/** What a store throws for a key that is not a fingerprint. */
export function checkFingerprint(fingerprint: string): void {
  if (!FINGERPRINT.test(fingerprint)) throw new Error(`not a secret fingerprint: "${fingerprint.slice(0, 80)}"`);
}

/**
 * Records that a request of the cluster was verified with the secret `fingerprint` at `at`.
 * Never throws: the answer goes out whatever the store does; a store that fails is told on
 * stderr (`rotate-secret --finish` may then see an older time, or none, and finish too early:
 * the log line is the trace).
 */
export async function noteVerified(
  store: { verifiedWith(clusterId: string, fingerprint: string, at: number): Promise<void> },
  clusterId: string,
  fingerprint: string,
  at: number,
): Promise<void> {
  try {
    await store.verifiedWith(clusterId, fingerprint, at);
  } catch (err) {
    console.error(JSON.stringify({ level: 'ERROR', message: 'verification not recorded', clusterId, fingerprint, error: String(err instanceof Error ? err.message : err) }));
  }
}
