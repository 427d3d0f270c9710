/**
 * The audit of one cluster, as pure functions: the disks EC2 holds for the cluster and the
 * cluster's latest volume report in, findings out.
 *
 * - orphan: a disk of the cluster that no PV names, `available`, older than the grace period
 *   (so a disk being provisioned is never flagged). It is *deletable* only when it is provably
 *   orphaned: the claim its `CSIVolumeName` was made for is absent from a report taken after
 *   the disk was created — a claim uid never comes back, so no one can still need the disk.
 * - lost: a PV of ours whose disk EC2 no longer has.
 * - drift: attached in EC2 to an instance no VolumeAttachment names, or a VolumeAttachment
 *   reported attached whose disk is not attached to its node's instance.
 */
import { KUBERNETES_UID, TagKeys, type ReportedVolume } from '../contract/index.js';
import { isGone, type Disk } from '../ec2/types.js';
import type { StoredReport } from '../reports/store.js';
import { monthlyCost, PRICES_AS_OF } from './prices.js';

/**
 * How much earlier than a report a disk must have been made for the report to speak for it:
 * the report's time is the forwarder's clock, the disk's EC2's, and the two may differ a little.
 */
export const CLOCK_SKEW_MS = 5_000;

/** Default grace period: a disk younger than this is never an orphan (in-flight provisioning). */
export const DEFAULT_GRACE_MS = 60 * 60 * 1000;

export interface AuditInput {
  clusterId: string;
  region: string;
  /** Every disk tagged for the cluster (the gateway's `listClusterDisks`). */
  disks: readonly Disk[];
  report: StoredReport | undefined;
  /**
   * The disks the report names that `disks` lacks, looked up by ID ({@link lostCandidates}):
   * undefined where EC2 has no such volume.
   */
  lookedUp: ReadonlyMap<string, Disk | undefined>;
  /** Epoch ms. */
  now: number;
  graceMs: number;
}

export interface Costed {
  volumeId: string;
  sizeGiB: number;
  type: string;
  zone: string;
  /** USD per month at list price; absent when the price table has none for the Region or type. */
  monthlyUsd?: number;
}

export interface OrphanFinding extends Costed {
  createdAt: string;
  /** The disk's `CSIVolumeName` (the PV it was made for), if tagged. */
  name?: string;
  /** The claim it was made for, from its tags. */
  claim?: { namespace?: string; name?: string; uid?: string };
  deletable: boolean;
  /** Why it may or may not be deleted. */
  why: string;
}

export interface LostFinding {
  volumeId: string;
  pv: string;
  pvUid?: string;
  claim?: ReportedVolume['claim'];
}

export type DriftDirection = 'attached-without-volumeattachment' | 'volumeattachment-without-attachment';

export interface DriftFinding extends Costed {
  direction: DriftDirection;
  instanceId: string;
  /** The VolumeAttachment, for `volumeattachment-without-attachment`. */
  volumeAttachment?: string;
}

export interface AuditFindings {
  clusterId: string;
  region: string;
  /** ISO 8601. */
  at: string;
  graceSeconds: number;
  /** When the report the audit judged by was observed (ISO 8601); absent without one. */
  reportObservedAt?: string;
  pricesAsOf: string;
  /** Disks of the cluster EC2 holds (not being deleted). */
  disks: number;
  orphans: OrphanFinding[];
  lost: LostFinding[];
  drift: DriftFinding[];
  totals: { orphanedVolumes: number; orphanedGiB: number; orphanedMonthlyUsd: number; unpriced: number };
  /** What limited the audit, e.g. no report from the cluster yet. */
  notes: string[];
}

/** The IDs the report names that the cluster's listing lacks: to be looked up by ID before judging them lost. */
export function lostCandidates(disks: readonly Disk[], report: StoredReport | undefined): string[] {
  const listed = new Set(disks.map((d) => d.volumeId));
  return [...new Set((report?.report.volumes ?? []).map((v) => v.volumeId).filter((id) => !listed.has(id)))];
}

export function auditFindings(input: AuditInput): AuditFindings {
  const { disks, report, now, graceMs, region } = input;
  const live = disks.filter((d) => !isGone(d));
  const base = {
    clusterId: input.clusterId,
    region,
    at: new Date(now).toISOString(),
    graceSeconds: Math.round(graceMs / 1000),
    pricesAsOf: PRICES_AS_OF,
    disks: live.length,
  };
  if (!report) {
    return {
      ...base,
      orphans: [],
      lost: [],
      drift: [],
      totals: { orphanedVolumes: 0, orphanedGiB: 0, orphanedMonthlyUsd: 0, unpriced: 0 },
      notes: [`no volume report from cluster "${input.clusterId}" yet: nothing can be judged until its forwarder reports`],
    };
  }
  const named = namedVolumes(report);
  const orphans = live.flatMap((disk) => {
    const verdict = judgeOrphan(disk, report, named, now, graceMs);
    return verdict ? [{ ...costed(disk, region), ...orphanDetails(disk), ...verdict }] : [];
  });
  const lost = lostVolumes(input);
  const drift = driftOf(live, report, region);
  const priced = orphans.filter((o) => o.monthlyUsd !== undefined);
  return {
    ...base,
    reportObservedAt: new Date(report.observedAt).toISOString(),
    orphans,
    lost,
    drift,
    totals: {
      orphanedVolumes: orphans.length,
      orphanedGiB: orphans.reduce((sum, o) => sum + o.sizeGiB, 0),
      orphanedMonthlyUsd: Math.round(priced.reduce((sum, o) => sum + (o.monthlyUsd ?? 0), 0) * 100) / 100,
      unpriced: orphans.length - priced.length,
    },
    notes: priced.length < orphans.length ? [`no ${PRICES_AS_OF} list price for some volume types in ${region}: their cost is left out`] : [],
  };
}

/** The volume IDs the report's PVs name. */
export function namedVolumes(report: StoredReport): Set<string> {
  return new Set(report.report.volumes.map((v) => v.volumeId));
}

/**
 * Whether `disk` is an orphan and, if so, whether it is provably one (deletable). undefined:
 * not an orphan — a PV names it, it is attached or not `available`, or younger than the grace.
 * The clean-up asks this again of a disk described anew right before deleting it.
 */
export function judgeOrphan(
  disk: Disk,
  report: StoredReport,
  named: ReadonlySet<string>,
  now: number,
  graceMs: number,
): { deletable: boolean; why: string } | undefined {
  if (disk.state !== 'available' || disk.attachments.some((a) => a.state !== 'detached')) return undefined;
  if (named.has(disk.volumeId)) return undefined;
  const created = Date.parse(disk.createdAt ?? '');
  // An age EC2 did not say is never taken for old.
  if (Number.isNaN(created) || now - created < graceMs) return undefined;

  const uid = claimUidOf(disk);
  if (uid === undefined) return { deletable: false, why: `its ${TagKeys.csiVolumeName} tag names no claim (pvc-<uid>): not volhook's to judge` };
  if (report.report.claims.includes(uid)) return { deletable: false, why: `its claim ${uid} still exists: provisioning has not finished` };
  if (report.observedAt - CLOCK_SKEW_MS <= created) return { deletable: false, why: 'the latest report does not postdate the disk: its claim may be new' };
  return { deletable: true, why: `its claim ${uid} no longer exists and no PersistentVolume names it` };
}

/** The claim uid in a disk's `CSIVolumeName` (`pvc-<uid>`), when it is one. */
export function claimUidOf(disk: Disk): string | undefined {
  const name = disk.tags[TagKeys.csiVolumeName];
  const uid = name?.startsWith('pvc-') ? name.slice(4) : undefined;
  return uid !== undefined && KUBERNETES_UID.test(uid) ? uid : undefined;
}

function orphanDetails(disk: Disk): Pick<OrphanFinding, 'createdAt' | 'name' | 'claim'> {
  const t = disk.tags;
  const claim = {
    ...(t[TagKeys.pvcNamespace] && { namespace: t[TagKeys.pvcNamespace] }),
    ...(t[TagKeys.pvcName] && { name: t[TagKeys.pvcName] }),
    ...(claimUidOf(disk) && { uid: claimUidOf(disk) }),
  };
  return {
    createdAt: disk.createdAt ?? '',
    ...(t[TagKeys.csiVolumeName] && { name: t[TagKeys.csiVolumeName] }),
    ...(Object.keys(claim).length > 0 && { claim }),
  };
}

function costed(disk: Disk, region: string): Costed {
  const usd = monthlyCost(disk, region);
  return { volumeId: disk.volumeId, sizeGiB: disk.sizeGiB, type: disk.type, zone: disk.zone, ...(usd !== undefined && { monthlyUsd: usd }) };
}

function lostVolumes({ disks, report, lookedUp }: AuditInput): LostFinding[] {
  const byId = new Map(disks.map((d) => [d.volumeId, d]));
  return (report?.report.volumes ?? []).flatMap((v) => {
    // A Released PV of the Delete policy loses its disk on purpose, its PV next.
    if (v.phase === 'Released' && v.reclaimPolicy === 'Delete') return [];
    const listed = byId.get(v.volumeId);
    if (listed && !isGone(listed)) return [];
    if (!listed && !lookedUp.has(v.volumeId)) return [];
    const found = listed ?? lookedUp.get(v.volumeId);
    if (found && !isGone(found)) return [];
    return [{ volumeId: v.volumeId, pv: v.pv, ...(v.pvUid && { pvUid: v.pvUid }), ...(v.claim && { claim: v.claim }) }];
  });
}

const LIVE_ATTACHMENT = new Set(['attaching', 'attached', 'busy']);

function driftOf(disks: readonly Disk[], report: StoredReport, region: string): DriftFinding[] {
  const drift: DriftFinding[] = [];
  const attachments = report.report.attachments;
  for (const disk of disks) {
    for (const a of disk.attachments) {
      if (!LIVE_ATTACHMENT.has(a.state)) continue;
      // Attached after the report was taken: its VolumeAttachment may be newer than the report.
      const since = Date.parse(a.attachTime ?? '');
      if (Number.isNaN(since) || since >= report.observedAt) continue;
      const known = attachments.some((va) => va.volumeId === disk.volumeId && (va.instanceId === undefined || va.instanceId === a.instanceId));
      if (!known) drift.push({ ...costed(disk, region), direction: 'attached-without-volumeattachment', instanceId: a.instanceId });
    }
  }
  const byId = new Map(disks.map((d) => [d.volumeId, d]));
  for (const va of attachments) {
    if (!va.attached || va.instanceId === undefined) continue;
    const disk = byId.get(va.volumeId);
    // A disk that is gone is lost, not drifted.
    if (!disk) continue;
    if (disk.attachments.some((a) => a.instanceId === va.instanceId && LIVE_ATTACHMENT.has(a.state))) continue;
    drift.push({ ...costed(disk, region), direction: 'volumeattachment-without-attachment', instanceId: va.instanceId, volumeAttachment: va.name });
  }
  return drift;
}
