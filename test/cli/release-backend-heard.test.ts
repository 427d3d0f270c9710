/**
 * `cluster release --apply` deregisters only once the backend has heard nothing from the
 * cluster for QUIET_MS (the longest a running forwarder is silent: REPORT_WITHIN_MAX_SECONDS and two resyncs), by its own dates: the latest report it received and the
 * latest request it refused (lib/reports). A forwarder release cannot see that still sends
 * would otherwise get 404 and tell the cluster's users to register it again.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ReleaseCommand } from '../../lib/cli/args.js';
import type { ClusterView, ForwarderEvidence } from '../../lib/cli/index.js';
import { QUIET_MS, readBackendHeard } from '../../lib/cli/release-backend.js';
import { runRelease, type BackendHeardReader, type ReleaseKube } from '../../lib/cli/release.js';
import type { RegistrationStore } from '../../lib/cli/stores.js';
import { createMemoryReportStore, type ReportStore } from '../../lib/reports/index.js';

const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
const NOW = Date.parse('2026-09-01T12:00:00Z');
const quiet: ForwarderEvidence[] = [{ serverDate: 'Tue, 01 Sep 2026 12:00:30 GMT', deployment: { kind: 'absent' }, pods: [] }];
const empty: ClusterView = { claims: [], volumes: [], attachments: [], csiNodes: [] };
const EMPTY_REPORT = { volumes: [], attachments: [], claims: [], snapshots: [] };

function world(reports: ReportStore, options: { heard?: BackendHeardReader | 'none'; duringWrites?: () => Promise<void> } = {}) {
  const deleted: string[] = [];
  let writes = 0;
  const store: RegistrationStore = {
    describe: (id) => `memory ${id}`,
    read: async (id) => ({ clusterId: id, secrets: [SECRET], region: 'us-east-1' }),
    create: async () => {},
    replace: async () => {},
    delete: async (id) => {
      deleted.push(id);
      return true;
    },
  };
  const kube: ReleaseKube = {
    readClusterView: async () => empty,
    readForwarderEvidence: async () => quiet,
    applyEach: async () => {
      writes++;
      await options.duringWrites?.();
      return new Map();
    },
  };
  const command = { command: 'release', clusterId: 'c1', target: { kind: 'file', path: 'unused.json' }, targetGiven: true, kube: {}, apply: true, json: true } as ReleaseCommand;
  let stdout = '';
  const heard = options.heard === 'none' ? undefined : (options.heard ?? (() => readBackendHeard(reports, 'table volhook-test-reports', 'c1')));
  const run = () => runRelease(command, new KubeConfig(), store, { stdout: (t) => void (stdout += t), stderr: () => {} }, kube, heard, () => NOW);
  return { run, deleted, writes: () => writes, out: () => JSON.parse(stdout) as { refusals: string[]; registration: { status: string }; applied: boolean } };
}

const reportAt = (reports: ReportStore, receivedAt: number) => reports.put({ clusterId: 'c1', digest: 'd1', observedAt: receivedAt, receivedAt, report: EMPTY_REPORT });

describe('cluster release --apply and what the backend last heard', () => {
  it('a report received 100 s ago -> refused before any write, the registration kept, the advice: uninstall, wait, run again', async () => {
    const reports = createMemoryReportStore();
    await reportAt(reports, NOW - 100_000);
    const w = world(reports);
    expect(await w.run()).toBe(1);
    expect(w.out().refusals).toEqual([
      expect.stringMatching(/^the backend received a report from the cluster 100 s ago \(2026-09-01T11:58:20\.000Z, table volhook-test-reports\): a forwarder still sends\. Uninstall every forwarder .* wait until the backend has heard nothing for 2400 s \(2026-09-01T12:38:20\.000Z at the earliest\).*would get 404/),
    ]);
    expect(w.writes()).toBe(0);
    expect(w.deleted).toEqual([]);
    expect(w.out().registration.status).toBe('kept');
  });

  it('a report received 1,500 s ago (past two resyncs: a forwarder at rest reports within 1,800 s) -> refused', async () => {
    const reports = createMemoryReportStore();
    await reportAt(reports, NOW - 1_500_000);
    const w = world(reports);
    expect(await w.run()).toBe(1);
    expect(w.out().refusals).toEqual([expect.stringMatching(/^the backend received a report from the cluster 1500 s ago/)]);
    expect(w.deleted).toEqual([]);
  });

  it('no report for long, but a request refused 30 s ago -> refused', async () => {
    const reports = createMemoryReportStore();
    await reportAt(reports, NOW - 7_200_000);
    await reports.refused('c1', { at: NOW - 30_000, status: 401, code: 'bad_signature' });
    const w = world(reports);
    expect(await w.run()).toBe(1);
    expect(w.out().refusals).toEqual([expect.stringMatching(/^the backend refused a request of the cluster 30 s ago/)]);
    expect(w.deleted).toEqual([]);
  });

  it('the control: quiet for longer than the window (report and refusal) -> deregistered, exit 0', async () => {
    const reports = createMemoryReportStore();
    await reportAt(reports, NOW - QUIET_MS - 1_000);
    await reports.refused('c1', { at: NOW - QUIET_MS - 500, status: 401, code: 'bad_signature' });
    const w = world(reports);
    expect(await w.run()).toBe(0);
    expect(w.out().refusals).toEqual([]);
    expect(w.deleted).toEqual(['c1']);
    // Nothing ever heard: the same.
    const never = world(createMemoryReportStore());
    expect(await never.run()).toBe(0);
    expect(never.deleted).toEqual(['c1']);
  });

  it('a report received while the writes ran -> refused at the check before deregistering, the registration kept', async () => {
    const reports = createMemoryReportStore();
    await reportAt(reports, NOW - QUIET_MS - 1_000);
    const w = world(reports, { duringWrites: async () => void (await reports.put({ clusterId: 'c1', digest: 'd2', observedAt: NOW - 5_000, receivedAt: NOW - 5_000, report: EMPTY_REPORT })) });
    expect(await w.run()).toBe(1);
    expect(w.writes()).toBe(1);
    expect(w.out().refusals).toEqual([expect.stringMatching(/^after the writes: the backend received a report from the cluster 5 s ago/)]);
    expect(w.deleted).toEqual([]);
  });

  it('no report store to ask -> refused naming --reports-table', async () => {
    const w = world(createMemoryReportStore(), { heard: 'none' });
    expect(await w.run()).toBe(1);
    expect(w.out().refusals).toEqual([expect.stringMatching(/cannot tell whether the backend still hears from the cluster .*give --reports-table/)]);
    expect(w.deleted).toEqual([]);
  });
});
