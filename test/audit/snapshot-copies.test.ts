/** The audit shows each reported content's cross-Region copy and what its Region holds of it; copies are reported, never deleted. */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditSummary, auditTable, runAudit } from '../../lib/audit/index.js';
import { snapshotCopyFindings } from '../../lib/audit/snapshot-copies.js';
import type { ReportedSnapshotContent } from '../../lib/contract/index.js';
import { Ec2Error, type RegionSnapshots, type Snapshot } from '../../lib/ec2/types.js';
import { createMemoryReportStore } from '../../lib/reports/index.js';
import { FakeGateway } from '../reconcile/fake-gateway.js';

const WEST = 'us-west-2';
const now = Date.now();

const content = (name: string, copy?: ReportedSnapshotContent['copy']): ReportedSnapshotContent => ({
  content: name,
  deletionPolicy: 'Delete',
  readyToUse: true,
  beingCreated: false,
  deleting: false,
  ...(copy && { copy }),
});

const copyOf = (name: string, snapshotId = `snap-${randomUUID().replaceAll('-', '').slice(0, 17)}`): Snapshot => ({
  snapshotId,
  volumeId: 'vol-ffffffff',
  sizeGiB: 4,
  state: 'completed',
  startTime: new Date(now - 3_600_000).toISOString(),
  encrypted: false,
  tags: { CSIVolumeSnapshotName: name, 'kubernetes.io/cluster/alpha': 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': 'alpha' },
});

describe('snapshotCopyFindings', () => {
  it('ok, lost, duplicated, unrecorded, unreadable; a copy never sent (waiting) or refused before one was made is not looked up', () => {
    const a = copyOf('a');
    const c1 = copyOf('c');
    const c2 = copyOf('c');
    const d = copyOf('d');
    const contents = [
      content('a', { region: WEST, state: 'completed', snapshotId: a.snapshotId }),
      content('b', { region: WEST, state: 'completed', snapshotId: 'snap-0000000000000000b' }),
      content('c', { region: WEST, state: 'pending', snapshotId: c1.snapshotId }),
      content('d', { region: WEST, state: 'copying' }),
      content('e', { region: 'eu-west-1', state: 'completed', snapshotId: 'snap-0000000000000000e' }),
      content('f', { region: WEST, state: 'waiting' }),
      content('g', { region: WEST, state: 'failed', message: 'denied' }),
      content('h'),
    ];
    const found = new Map<string, Snapshot[] | { error: string }>([
      ['a', [a]],
      ['b', []],
      ['c', [c1, c2]],
      ['d', [d]],
      ['e', { error: 'UnauthorizedOperation' }],
    ]);
    const findings = snapshotCopyFindings(contents, found);
    expect(findings.map((f) => [f.content, f.verdict])).toEqual([
      ['a', 'ok'],
      ['b', 'lost'],
      ['c', 'duplicated'],
      ['d', 'unrecorded'],
      ['e', 'unreadable'],
    ]);
    expect(findings[1]?.why).toContain('snap-0000000000000000b');
    expect(findings[2]?.why).toContain(c1.snapshotId);
  });
});

describe('runAudit: cross-Region copies', () => {
  it("looks each recorded copy up in its Region, shows it in the table and summary, deletes none of them (even with --delete-snapshots)", async () => {
    const ec2 = new FakeGateway('alpha');
    const reports = createMemoryReportStore();
    const copy = copyOf('snapcontent-1');
    ec2.regionSnapshots.set(WEST, new Map([[copy.snapshotId, copy]]));
    await reports.put({
      clusterId: 'alpha',
      digest: randomUUID().replaceAll('-', '').padEnd(64, '0'),
      observedAt: now - 1000,
      receivedAt: now - 1000,
      report: {
        volumes: [],
        attachments: [],
        claims: [],
        snapshots: [content('snapcontent-1', { region: WEST, state: 'completed', snapshotId: copy.snapshotId }), content('snapcontent-2', { region: WEST, state: 'completed', snapshotId: 'snap-0000000000000000b' })],
      },
    });
    const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: 1000, delete: true, deleteSnapshots: true, now: () => now });
    expect(result.snapshotCopies.map((c) => [c.content, c.verdict])).toEqual([
      ['snapcontent-1', 'ok'],
      ['snapcontent-2', 'lost'],
    ]);
    expect(auditTable(result)).toMatch(/snapshot copy\s+snap-\w+\s+in us-west-2\s+snapcontent-1\s+ok: /);
    expect(auditSummary(result)).toContain('2 cross-Region cop(ies), 1 not ok');
    expect(ec2.regionSnapshots.get(WEST)?.size).toBe(1);
    expect(ec2.calls.filter((c) => c.verb === 'snapshotsIn').map((c) => c.args[1])).toEqual(['findSnapshotsByName', 'findSnapshotsByName']);
  });

  it('a Region EC2 refuses to list -> that copy unreadable, the rest of the audit stands; a transient error fails the audit (control)', async () => {
    const ec2 = new FakeGateway('alpha');
    const reports = createMemoryReportStore();
    await reports.put({
      clusterId: 'alpha',
      digest: randomUUID().replaceAll('-', '').padEnd(64, '0'),
      observedAt: now - 1000,
      receivedAt: now - 1000,
      report: { volumes: [], attachments: [], claims: [], snapshots: [content('snapcontent-1', { region: WEST, state: 'completed', snapshotId: 'snap-0000000000000000a' })] },
    });
    let error = new Ec2Error('unauthorized', 'UnauthorizedOperation', 'EC2 DescribeSnapshots: not allowed', 'DescribeSnapshots');
    const real = ec2.snapshotsIn.bind(ec2);
    ec2.snapshotsIn = (region: string): RegionSnapshots => ({ ...real(region), findSnapshotsByName: () => Promise.reject(error) });
    const result = await runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: 1000, delete: false, now: () => now });
    expect(result.snapshotCopies).toMatchObject([{ verdict: 'unreadable', why: expect.stringContaining('not allowed') }]);
    error = new Ec2Error('transient', 'RequestLimitExceeded', 'throttled', 'DescribeSnapshots');
    await expect(runAudit({ clusterId: 'alpha', region: 'us-east-1', gateway: ec2, reports, graceMs: 1000, delete: false, now: () => now })).rejects.toThrow('throttled');
  });
});
