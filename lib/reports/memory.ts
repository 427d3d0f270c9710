/** Reports in one process's memory: tests, and the crash explorer. */
import type { Write } from '../contract/index.js';
import type { ReportStore, StoredReport } from './store.js';

export function createMemoryReportStore(): ReportStore {
  const reports = new Map<string, StoredReport>();
  const events = new Map<string, Write[]>();
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
    async confirm(clusterId, digest, observedAt) {
      const current = reports.get(clusterId);
      if (current?.digest !== digest) return false;
      current.observedAt = Math.max(current.observedAt, observedAt);
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
  };
}
