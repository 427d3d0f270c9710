/**
 * The audit of one cluster, as pure functions: the disks EC2 holds for the cluster and the
 * cluster's latest volume report in, findings out.
 *
 * The report is dated by {@link reportTime}: the forwarder's time, never later than when the
 * backend received it (a forwarder whose clock is fast cannot make a report newer than it is).
 *
 * - orphan: a disk of the cluster that no PV names, `available`, older than the grace period
 *   (so a disk being provisioned is never flagged). It is *provably* orphaned when the claim its
 *   `CSIVolumeName` was made for is absent from a report taken after the disk was created — a
 *   claim uid never comes back, so no one can still need the disk. It is *deletable* when it is
 *   provably orphaned and not retained (its last known PV had Retain: the user's disk), unless
 *   the operator named it. Deleting takes two audits (marks.ts): one marks it, a later one
 *   deletes it once a report received after the mark still names nothing of it.
 * - unknown: a disk no PV names that is newer than the latest report: the report cannot say
 *   what names it (a static PV made since, say), so nothing is judged.
 * - lost: a PV of ours whose disk EC2 no longer has.
 * - drift: attached in EC2 to an instance no VolumeAttachment names, or a VolumeAttachment
 *   reported attached whose disk is not attached to its node's instance.
 * - untagged: a disk listed for the cluster (`kubernetes.io/cluster/<id>=owned`) that volhook
 *   may not act on (`tagOwnership`): one that needs adopting — made before volumes carried
 *   `volhook.io/cluster`, say: `cluster adopt --apply` tags it — or one whose
 *   `volhook.io/cluster` names another cluster. Never judged an orphan, so never marked,
 *   deleted or detached; judged again once tagged.
 */
import { KUBERNETES_UID, TagKeys, tagOwnership, type ReportedVolume, type TagOwnership } from '../contract/index.js';
import { isGone, type Disk } from '../ec2/types.js';
import { adoptionProblem } from '../reconcile/tags.js';
import { reportTime, type StoredReport } from '../reports/store.js';
import { markOf, type MarkState } from './marks.js';
import { monthlyCost, PRICES_AS_OF } from './prices.js';

/**
 * How much earlier than a report a disk must have been made for the report to speak for it:
 * the report's time is at most when the backend received it, the disk's is EC2's clock, and a
 * report reaches the backend a moment after the forwarder read it.
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
  /** Disks whose last known PV had Retain after no report names them (the report store's memory). */
  retained?: ReadonlySet<string>;
  /** The audit's marks (resource ID → when marked, epoch ms). */
  marks?: ReadonlyMap<string, number>;
  /** Disks the operator named to be deleted (`--volume`): retained ones among them may go. */
  chosen?: ReadonlySet<string>;
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
  /** Provably orphaned, and not retained unless the operator named it: what a --delete audit deletes once its mark is due. */
  deletable: boolean;
  /** Why it may or may not be deleted. */
  why: string;
  /** Its last known PV had the Retain policy: kept unless the operator names it. */
  retained?: true;
  /** Of a provably orphaned disk: since when it is marked, and whether a report received since still names nothing of it. */
  mark?: MarkState;
}

/** A disk no PV names that is newer than the latest report: the report cannot speak for it. */
export interface UnknownFinding extends Costed {
  createdAt: string;
  name?: string;
  why: string;
}

/** A disk (or snapshot) listed for the cluster that volhook may not act on: reported, never deleted or detached. */
export interface UntaggedFinding extends Costed {
  name?: string;
  /** `needs-adopt`: the cluster's, short of tags `cluster adopt` adds; `foreign`: its `volhook.io/cluster` names another cluster. */
  ownership: 'needs-adopt' | 'foreign';
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
  /** When the report the audit judged by was observed, by the forwarder's clock (ISO 8601); absent without one. */
  reportObservedAt?: string;
  /** The time the report speaks for as the audit dates it ({@link reportTime}, ISO 8601); absent without one. */
  reportAt?: string;
  /** How old that is, by the auditor's clock (seconds). */
  reportAgeSeconds?: number;
  pricesAsOf: string;
  /** Disks of the cluster EC2 holds (not being deleted). */
  disks: number;
  orphans: OrphanFinding[];
  unknown: UnknownFinding[];
  lost: LostFinding[];
  drift: DriftFinding[];
  /** Disks listed for the cluster that volhook may not act on (see the file comment). */
  untagged: UntaggedFinding[];
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
  const untagged = live.flatMap((disk) => {
    const why = untaggedWhy({ kind: 'volume', id: disk.volumeId }, tagOwnership(disk.tags, input.clusterId), input.clusterId);
    if (!why) return [];
    const name = disk.tags[TagKeys.csiVolumeName];
    return [{ ...costed(disk, region), ...(name && { name }), ...why }];
  });
  const judged = live.filter((disk) => !untagged.some((u) => u.volumeId === disk.volumeId));
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
      unknown: [],
      lost: [],
      drift: [],
      untagged,
      totals: { orphanedVolumes: 0, orphanedGiB: 0, orphanedMonthlyUsd: 0, unpriced: 0 },
      notes: [`no volume report from cluster "${input.clusterId}" yet: nothing can be judged until its forwarder reports`],
    };
  }
  const evidence = evidenceOf(report, input);
  const orphans: OrphanFinding[] = [];
  const unknown: UnknownFinding[] = [];
  for (const disk of judged) {
    const verdict = judgeOrphan(disk, evidence, now, graceMs);
    if (verdict?.kind === 'unknown') {
      const { createdAt, name } = orphanDetails(disk);
      unknown.push({ ...costed(disk, region), createdAt, ...(name && { name }), why: verdict.why });
    } else if (verdict) {
      const mark = verdict.provable ? markOf(input.marks?.get(disk.volumeId), report, now) : undefined;
      orphans.push({
        ...costed(disk, region),
        ...orphanDetails(disk),
        deletable: verdict.deletable,
        why: verdict.why,
        ...(verdict.retained && { retained: true as const }),
        ...(mark && { mark }),
      });
    }
  }
  const lost = lostVolumes(input);
  const drift = driftOf(live, report, region);
  const priced = orphans.filter((o) => o.monthlyUsd !== undefined);
  const at = reportTime(report);
  return {
    ...base,
    reportObservedAt: new Date(report.observedAt).toISOString(),
    reportAt: new Date(at).toISOString(),
    reportAgeSeconds: Math.round((now - at) / 1000),
    orphans,
    unknown,
    lost,
    drift,
    untagged,
    totals: {
      orphanedVolumes: orphans.length,
      orphanedGiB: orphans.reduce((sum, o) => sum + o.sizeGiB, 0),
      orphanedMonthlyUsd: Math.round(priced.reduce((sum, o) => sum + (o.monthlyUsd ?? 0), 0) * 100) / 100,
      unpriced: orphans.length - priced.length,
    },
    notes: [
      ...(report.receivedAt === 0 ? [UNDATED_REPORT] : []),
      ...(priced.length < orphans.length ? [`no ${PRICES_AS_OF} list price for some volume types in ${region}: their cost is left out`] : []),
    ],
  };
}

/**
 * Why the audit leaves a resource of the cluster alone whatever the report says, in the
 * finding's words; undefined for one volhook may act on (`owned`).
 */
export function untaggedWhy(resource: { kind: 'volume' | 'snapshot'; id: string }, ownership: TagOwnership, clusterId: string): Pick<UntaggedFinding, 'ownership' | 'why'> | undefined {
  switch (ownership.kind) {
    case 'owned':
      return undefined;
    case 'needs-adopt':
      return { ownership: 'needs-adopt', why: `untagged for IAM: ${adoptionProblem(resource, ownership, clusterId, 'delete or detach it')}` };
    case 'foreign':
      return { ownership: 'foreign', why: `${ownership.why}: not this cluster's to delete or detach` };
  }
}

/**
 * Why a resource described anew right before its deletion is kept for its tags: no longer the
 * cluster's, or one volhook may not act on; undefined when it is the cluster's to act on.
 */
export function describedAgainWhy(resource: { kind: 'volume' | 'snapshot'; id: string }, tags: Readonly<Record<string, string>>, clusterId: string): string | undefined {
  const ownership = tagOwnership(tags, clusterId);
  if (ownership.kind === 'foreign') return `no longer tagged for cluster "${clusterId}" (${ownership.why})`;
  return untaggedWhy(resource, ownership, clusterId)?.why;
}

/** The note of an audit that judges by a report kept before the backend dated reports by its own clock. */
export const UNDATED_REPORT =
  'the latest report was kept before the backend dated reports by its own clock: it speaks for no time, and nothing is judged orphaned until the next one arrives (within a resync)';

/** What a disk is judged against: the report, what its PVs name, what the cluster keeps for its users, what the operator chose. */
export interface Evidence {
  report: StoredReport;
  /** The volume IDs the report's PVs name ({@link namedVolumes}). */
  named: ReadonlySet<string>;
  retained: ReadonlySet<string>;
  chosen: ReadonlySet<string>;
}

export function evidenceOf(report: StoredReport, from: Pick<AuditInput, 'retained' | 'chosen'>): Evidence {
  return { report, named: namedVolumes(report), retained: from.retained ?? new Set(), chosen: from.chosen ?? new Set() };
}

/** The volume IDs the report's PVs name. */
export function namedVolumes(report: StoredReport): Set<string> {
  return new Set(report.report.volumes.map((v) => v.volumeId));
}

export type OrphanVerdict =
  | { kind: 'unknown'; why: string }
  | {
      kind: 'orphan';
      /** Provably orphaned: its claim is gone from a report that postdates it. */
      provable: boolean;
      /** Its last known PV had Retain. */
      retained: boolean;
      /** Provable, and not retained unless chosen by the operator. */
      deletable: boolean;
      why: string;
    };

/**
 * Whether `disk` is an orphan (or unknown to the report) and, if so, whether it is provably one
 * and deletable. undefined: not an orphan — a PV names it, it is attached or not `available`, or
 * younger than the grace. The clean-up asks this again of a disk described anew right before
 * deleting it.
 */
export function judgeOrphan(disk: Disk, evidence: Evidence, now: number, graceMs: number): OrphanVerdict | undefined {
  const { report, named } = evidence;
  if (disk.state !== 'available' || disk.attachments.some((a) => a.state !== 'detached')) return undefined;
  if (named.has(disk.volumeId)) return undefined;
  const created = Date.parse(disk.createdAt ?? '');
  // An age EC2 did not say is never taken for old.
  if (Number.isNaN(created) || now - created < graceMs) return undefined;
  const at = reportTime(report);
  if (at - CLOCK_SKEW_MS <= created) {
    return { kind: 'unknown', why: `newer than the latest report (of ${new Date(at).toISOString()}): it cannot say what names the disk` };
  }

  const orphan = (provable: boolean, why: string): OrphanVerdict => ({ kind: 'orphan', provable, retained: false, deletable: provable, why });
  const uid = claimUidOf(disk);
  if (uid === undefined) return orphan(false, `its ${TagKeys.csiVolumeName} tag names no claim (pvc-<uid>): not volhook's to judge`);
  if (report.report.claims.includes(uid)) return orphan(false, `its claim ${uid} still exists: provisioning has not finished`);
  if (evidence.retained.has(disk.volumeId)) {
    const chosen = evidence.chosen.has(disk.volumeId);
    return {
      kind: 'orphan',
      provable: true,
      retained: true,
      deletable: chosen,
      why: chosen
        ? `its last known PersistentVolume had reclaimPolicy Retain, and the operator named it; its claim ${uid} no longer exists and no PersistentVolume names it`
        : `its last known PersistentVolume had reclaimPolicy Retain: the disk is its user's (delete it by naming it: --delete --volume ${disk.volumeId})`,
    };
  }
  return orphan(true, `its claim ${uid} no longer exists and no PersistentVolume names it`);
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
      if (Number.isNaN(since) || since >= reportTime(report)) continue;
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
