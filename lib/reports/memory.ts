/** Reports in one process's memory: tests, and the crash explorer. */
import { assembleReport, type Write } from '../contract/index.js';
import { recordsRefusal, type Refusal } from './refusals.js';
import { checkFingerprint, recordsVerification, type VerifiedBy } from './verified-by.js';
import { checkResourceIds, partsMissing, type ReportStore, type StoredReport, type StoredReportPart } from './store.js';

/** Reports in parts kept per cluster at once; an older unfinished one is let go for a newer (its forwarder sends it again). */
export const MAX_REPORTS_IN_PARTS = 4;

export function createMemoryReportStore(): ReportStore {
  const reports = new Map<string, StoredReport>();
  const events = new Map<string, Write[]>();
  /** Per cluster, per digest (in the order first seen), the parts by index. */
  const inParts = new Map<string, Map<string, Map<number, StoredReportPart>>>();
  const marks = new Map<string, Map<string, number>>();
  const retained = new Map<string, Set<string>>();
  const refusals = new Map<string, Refusal>();
  const verified = new Map<string, VerifiedBy>();
  const partsOf = (clusterId: string, digest: string) => inParts.get(clusterId)?.get(digest);
  return {
    async get(clusterId) {
      const stored = reports.get(clusterId);
      return stored && structuredClone(stored);
    },
    async put(report) {
      const current = reports.get(report.clusterId);
      if (current && current.observedAt > report.observedAt) return false;
      reports.set(report.clusterId, structuredClone(report));
      return true;
    },
    async confirm(clusterId, digest, observedAt, receivedAt) {
      const current = reports.get(clusterId);
      if (current?.digest !== digest) return false;
      if (observedAt < current.observedAt) return true;
      current.observedAt = observedAt;
      if (receivedAt !== undefined) current.receivedAt = receivedAt;
      return true;
    },
    async putPart(part) {
      const digests = inParts.get(part.clusterId) ?? new Map<string, Map<number, StoredReportPart>>();
      inParts.set(part.clusterId, digests);
      let parts = digests.get(part.digest);
      if (!parts) {
        parts = new Map();
        digests.set(part.digest, parts);
        for (const digest of [...digests.keys()].slice(0, -MAX_REPORTS_IN_PARTS)) digests.delete(digest);
      }
      const kept = parts.get(part.index);
      parts.set(part.index, { ...structuredClone(part), receivedAt: Math.min(part.receivedAt, kept?.receivedAt ?? Infinity) });
      return parts.size;
    },
    async parts(clusterId, digest, count) {
      const parts = partsOf(clusterId, digest);
      return Array.from({ length: count }, (_, i) => {
        const part = parts?.get(i);
        return part && part.count === count ? structuredClone(part) : undefined;
      });
    },
    async complete(clusterId, digest, count, observedAt, receivedAt) {
      const parts = partsOf(clusterId, digest);
      const ordered = Array.from({ length: count }, (_, i) => parts?.get(i));
      // Completed a moment ago by a request that carried the same last part.
      if (ordered.some((p) => !p) && reports.get(clusterId)?.digest === digest) return true;
      if (ordered.some((p) => !p)) throw partsMissing(clusterId, digest);
      inParts.get(clusterId)?.delete(digest);
      const current = reports.get(clusterId);
      if (current && current.observedAt > observedAt) return false;
      reports.set(clusterId, { clusterId, digest, observedAt, receivedAt, report: assembleReport(ordered.map((p) => (p as StoredReportPart).report)) });
      return true;
    },
    async queueEvents(clusterId, queued) {
      events.set(clusterId, [...(events.get(clusterId) ?? []), ...structuredClone(queued)]);
    },
    async takeEvents(clusterId) {
      const taken = events.get(clusterId) ?? [];
      events.delete(clusterId);
      return taken;
    },
    async clusters() {
      return [...reports.keys()].sort();
    },
    async marks(clusterId) {
      return new Map(marks.get(clusterId));
    },
    async mark(clusterId, marked) {
      checkResourceIds(marked.keys());
      const held = marks.get(clusterId) ?? new Map<string, number>();
      marks.set(clusterId, held);
      for (const [id, at] of marked) if (!held.has(id)) held.set(id, at);
    },
    async unmark(clusterId, ids) {
      for (const id of ids) marks.get(clusterId)?.delete(id);
    },
    async retained(clusterId) {
      return new Set(retained.get(clusterId));
    },
    async retain(clusterId, ids) {
      checkResourceIds(ids);
      const held = retained.get(clusterId) ?? new Set<string>();
      retained.set(clusterId, held);
      for (const id of ids) held.add(id);
    },
    async release(clusterId, ids) {
      for (const id of ids) retained.get(clusterId)?.delete(id);
    },
    async refused(clusterId, refusal) {
      if (reports.has(clusterId) && recordsRefusal(refusals.get(clusterId), refusal.at)) refusals.set(clusterId, { ...refusal });
    },
    async lastRefusal(clusterId) {
      const held = refusals.get(clusterId);
      return held && { ...held };
    },
    async verifiedWith(clusterId, fingerprint, at) {
      checkFingerprint(fingerprint);
      const held = verified.get(clusterId) ?? {};
      verified.set(clusterId, held);
      if (recordsVerification(held[fingerprint], at)) held[fingerprint] = at;
    },
    async verifiedBy(clusterId) {
      return { ...verified.get(clusterId) };
    },
  };
}
