/**
 * Whether `rotate-secret --finish` may remove a cluster's older secrets: not while the backend
 * verified a request with one of them lately — a forwarder replica still signing with it would,
 * once it is removed, get 401 for every request. The evidence is the backend's own, dated by its
 * clock: per secret fingerprint, when it last verified a request of the cluster with it, kept in
 * the report store (lib/reports/verified-by.ts).
 */
import { FORWARDER_SILENCE_MS } from '../audit/marks.js';
import { VERIFIED_RECORD_INTERVAL_MS, type VerifiedBy } from '../reports/index.js';

/**
 * How long no request may have been verified with a secret about to be removed: longer than a
 * running forwarder at rest goes without a request (it reports within REPORT_WITHIN_MAX_SECONDS).
 */
export const ROTATION_QUIET_MS = FORWARDER_SILENCE_MS;

/**
 * Why the secrets `removed` (fingerprints) must not be removed at `now`, or undefined when none
 * verified a request in the last ROTATION_QUIET_MS. A recorded time may lag the latest use by
 * the record interval, so each counts as lasting that much longer.
 */
export function finishRefusal(removed: readonly string[], verifiedBy: VerifiedBy, now: number, where: string, newest: string): string | undefined {
  const recent = removed
    .flatMap((fingerprint) => {
      const at = verifiedBy[fingerprint];
      return at !== undefined && now < at + VERIFIED_RECORD_INTERVAL_MS + ROTATION_QUIET_MS ? [{ fingerprint, at }] : [];
    })
    .sort((a, b) => b.at - a.at);
  if (recent.length === 0) return undefined;
  const latest = recent[0]!;
  const uses = recent.map(({ fingerprint, at }) => `${fingerprint} at ${new Date(at).toISOString()} (${Math.max(0, Math.round((now - at) / 1000))} s ago)`).join(', ');
  return (
    `the backend verified a request of the cluster with a secret --finish would remove: ${uses} (${where}). ` +
    `Wait until every forwarder replica signs with the new secret — its metric volhook_forwarder_signing_secret_info{fingerprint="${newest}"} is 1 on each — ` +
    `and the backend has verified nothing with the old one for ${ROTATION_QUIET_MS / 1000} s ` +
    `(${new Date(latest.at + VERIFIED_RECORD_INTERVAL_MS + ROTATION_QUIET_MS).toISOString()} at the earliest), then run --finish again`
  );
}
