/**
 * A cluster of 20,000 PVs, claims and attachments: its volume report goes out through the
 * forwarder's sender in parts, each request within MAX_REQUEST_BYTES, to the backend app, which
 * keeps the report only once every part is in — exactly the report the forwarder read — and the
 * audit judges by it.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { V1CSINode, V1PersistentVolume, V1PersistentVolumeClaim, V1VolumeAttachment } from '@kubernetes/client-node';
import { runAudit } from '../../lib/audit/index.js';
import { canonicalReport, identityTags, ItemKeys, MAX_REPORT_PART_BYTES, MAX_REQUEST_BYTES, REPORT_WITHIN_MAX_SECONDS, reportDigest, ReconcileRequestSchema, type VolumeReportItem } from '../../lib/contract/index.js';
import type { KubeClients } from '../../lib/kube/clients.js';
import { createMetrics } from '../../lib/forwarder/metrics.js';
import { silentLogger } from '../../lib/forwarder/logger.js';
import { buildVolumeReport, ReportTracker } from '../../lib/forwarder/report.js';
import { createBatchSender } from '../../lib/forwarder/sender.js';
import { createMemoryReportStore } from '../../lib/reports/index.js';
import { makeApp, SECRET_C1 } from '../app/harness.js';
import { incompressible, uid } from '../contract/big-report.js';
import { FakeGateway } from '../reconcile/fake-gateway.js';
import { attachment, claim, csiNode, volume } from './objects.js';

const ownership = { provisioner: 'ebs.csi.aws.com', driver: 'ebs.csi.aws.com' };
const N = 20_000;
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const volumeIdOf = (i: number) => `vol-${hex(i, 17)}`;

function cluster() {
  const claims: V1PersistentVolumeClaim[] = [];
  const volumes: V1PersistentVolume[] = [];
  const attachments: V1VolumeAttachment[] = [];
  const nodes = new Map<string, V1CSINode>();
  for (let i = 0; i < N; i += 1) {
    const pvName = `pvc-${uid(i)}`;
    const namespace = `team-${i % 40}`;
    claims.push(claim(`data-${i}`, { uid: uid(i), namespace, volumeName: pvName }));
    const pv = volume(pvName, { provisionedBy: ownership.provisioner });
    pv.spec!.csi!.volumeHandle = volumeIdOf(i);
    pv.spec!.claimRef = { namespace, name: `data-${i}`, uid: uid(i) };
    volumes.push(pv);
    const node = `node-${i % 500}`;
    attachments.push({ ...attachment(`csi-${hex(i, 64)}`, pvName, node), status: { attached: true } });
    if (!nodes.has(node)) nodes.set(node, csiNode(node, `i-${hex(i % 500, 17)}`));
  }
  return {
    claims: () => claims,
    volumes: () => volumes,
    attachments: () => attachments,
    csiNode: (name: string) => nodes.get(name),
    snapshotContents: () => [],
  };
}

describe('a volume report of 20,000 PVs, claims and attachments', () => {
  it('goes out in parts, each request within MAX_REQUEST_BYTES; the backend keeps exactly it once every part is in; then the digest alone; the audit judges by it', async () => {
    const source = cluster();
    const reports = createMemoryReportStore();
    const { app } = makeApp({ reports, now: () => Date.now() });
    const requests: { bytes: number; items: VolumeReportItem[] }[] = [];
    const tracker = new ReportTracker();
    const send = createBatchSender({
      config: { apiUrl: 'http://backend.invalid', clusterId: 'c1', requestTimeoutMs: 60_000 },
      clients: {} as KubeClients,
      metrics: createMetrics({ queueDepth: () => 0, defaultMetrics: false }),
      logger: silentLogger,
      secret: { current: () => SECRET_C1, reload: async () => {}, close() {} },
      fetch: async (url, init) => {
        const body = String(init.body);
        requests.push({ bytes: Buffer.byteLength(body), items: ReconcileRequestSchema.parse(JSON.parse(body)).items as VolumeReportItem[] });
        return app.request(url, init);
      },
      signal: new AbortController().signal,
      buildItem: (key) => (key === ItemKeys.report() ? tracker.item(() => buildVolumeReport(source, ownership), Date.now()) : undefined),
    });
    /** One turn of the report's key, as the pump gives it: its completion, told to the tracker. */
    const turn = async () => {
      const completion = (await send([ItemKeys.report()], new Map())).get(ItemKeys.report());
      tracker.answered(completion?.type === 'done');
      return completion;
    };

    const expected = canonicalReport(buildVolumeReport(source, ownership));
    const digest = reportDigest(expected);
    expect(Buffer.byteLength(JSON.stringify(expected))).toBeGreaterThan(3 * MAX_REQUEST_BYTES);
    const completions = [];
    for (let i = 0; i < 200; i += 1) {
      const completion = await turn();
      completions.push(completion?.type);
      if (completion?.type === 'done') break;
      expect(completion).toEqual({ type: 'requeue', afterMs: 0 });
      // Until the last part is in, the backend has no report of the cluster.
      expect(await reports.get('c1')).toBeUndefined();
    }
    const count = requests[0]?.items[0]?.part?.count ?? 0;
    expect(count).toBeGreaterThan(5);
    expect(completions).toEqual([...Array.from({ length: count - 1 }, () => 'requeue'), 'done']);
    expect(requests.map((r) => r.items[0]?.part?.index)).toEqual([...Array(count).keys()]);
    for (const { bytes, items } of requests) {
      expect(bytes).toBeLessThan(MAX_REQUEST_BYTES / 2);
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ digest, part: { count } });
    }
    const stored = await reports.get('c1');
    expect(stored?.digest).toBe(digest);
    expect(stored?.report).toEqual(expected);

    // Nothing changed: the digest alone, acknowledged.
    expect(await turn()).toEqual({ type: 'done', reportWithinSeconds: REPORT_WITHIN_MAX_SECONDS });
    expect(requests.at(-1)?.items).toEqual([{ kind: 'VolumeReport', digest, observedAt: expect.any(Number) }]);
    expect(requests.at(-1)!.bytes).toBeLessThan(1000);

    // The audit reads the whole report: a disk named by a PV, one made for a reported claim,
    // one made for no claim of the cluster; and every other PV's disk missing from EC2.
    const ec2 = new FakeGateway('c1');
    const made = { createdAt: new Date(Date.now() - 2 * 3_600_000).toISOString() };
    const tags = (name: string) => identityTags('c1', name);
    ec2.addVolume({ volumeId: volumeIdOf(N - 1), tags: tags(`pvc-${uid(N - 1)}`), ...made });
    ec2.addVolume({ volumeId: 'vol-0eeeeeeeeeeeeeee1', tags: tags(`pvc-${uid(N - 2)}`), ...made });
    const orphan = ec2.addVolume({ volumeId: 'vol-0eeeeeeeeeeeeeee2', tags: tags(`pvc-${randomUUID()}`), ...made });
    const audit = await runAudit({ clusterId: 'c1', region: 'us-east-1', gateway: ec2, reports, graceMs: 3_600_000, delete: false });
    // Not the PV's disk; the disk of a claim in the report's last part kept as still claimed; the other deletable.
    expect(audit.orphans.map((o) => [o.volumeId, o.deletable, o.why]).sort()).toEqual([
      ['vol-0eeeeeeeeeeeeeee1', false, `its claim ${uid(N - 2)} still exists: provisioning has not finished`],
      [orphan.volumeId, true, expect.stringContaining('no longer exists')],
    ]);
    expect(audit.lost).toHaveLength(N - 1);
    // As old as the digest's last confirmation says.
    expect(audit.reportObservedAt).toBe(new Date((await reports.get('c1'))!.observedAt).toISOString());
  }, 300_000);

  it('one PV whose entry is larger than a part alone -> that part is not sent, the log names the PV; the backend keeps no report made without it', async () => {
    const source = cluster();
    const volumes = source.volumes().slice(0, 50);
    const enormous = volume('pvc-enormous', { provisionedBy: ownership.provisioner });
    enormous.status = { phase: incompressible(2 * MAX_REPORT_PART_BYTES) };
    const small = { ...source, volumes: () => [...volumes, enormous], claims: () => source.claims().slice(0, 50), attachments: () => source.attachments().slice(0, 50) };
    const reports = createMemoryReportStore();
    const { app } = makeApp({ reports, now: () => Date.now() });
    const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
    const tracker = new ReportTracker();
    let posted = 0;
    const send = createBatchSender({
      config: { apiUrl: 'http://backend.invalid', clusterId: 'c1', requestTimeoutMs: 60_000 },
      clients: {} as KubeClients,
      metrics: createMetrics({ queueDepth: () => 0, defaultMetrics: false }),
      logger: { ...silentLogger, warn: (msg, fields) => void warnings.push({ msg, fields }) },
      secret: { current: () => SECRET_C1, reload: async () => {}, close() {} },
      fetch: async (url, init) => ((posted += 1), app.request(url, init)),
      signal: new AbortController().signal,
      buildItem: (key) => (key === ItemKeys.report() ? tracker.item(() => buildVolumeReport(small, ownership), Date.now()) : undefined),
    });
    const outcomes = [];
    // Three parts: the 50 PVs, the enormous one alone, the attachments and claims; two rounds.
    for (let i = 0; i < 6; i += 1) {
      const completion = (await send([ItemKeys.report()], new Map())).get(ItemKeys.report());
      tracker.answered(completion?.type === 'done');
      outcomes.push(completion?.type);
    }
    expect(outcomes).toEqual(['requeue', 'error', 'requeue', 'requeue', 'error', 'requeue']);
    expect(posted).toBe(4);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ msg: 'object does not fit the contract; not sent, retried with backoff', fields: { key: 'VolumeReport/cluster' } });
    expect(String(warnings[0]?.fields?.problem)).toContain(`the volume report cannot be sent: its PersistentVolume "pvc-enormous" alone is`);
    expect(await reports.get('c1')).toBeUndefined();
  });
});
