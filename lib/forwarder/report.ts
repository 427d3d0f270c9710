/**
 * The forwarder's volume report (lib/contract/report.ts), built from the caches: every PV of
 * ours with the disk it names, every VolumeAttachment of our driver with its node's instance,
 * the uids of our claims, and every VolumeSnapshotContent of our driver with the snapshot it
 * names. Sent under one queue key: at a resync when it changed, or when the backend needs it
 * by the next resync (ReportTracker `due`); the report itself (whole, or in parts) only when
 * its digest is not the one the backend last acknowledged, else the digest alone.
 */
import type { V1CSINode, V1PersistentVolume, V1PersistentVolumeClaim, V1VolumeAttachment } from '@kubernetes/client-node';
import {
  canonicalDigest,
  canonicalReport,
  isClaimFor,
  isOurContent,
  isOurVolume,
  MAX_GZIPPED_PART_BYTES,
  MAX_PARTS_PER_ITEM,
  MAX_REPORT_PART_BYTES,
  reclaimPolicy,
  reportItemProblem,
  REPORT_WITHIN_MAX_SECONDS,
  GroupSnapshotAnnotations,
  SnapshotAnnotations,
  snapshotCopyOf,
  splitReport,
  splitReportGzipped,
  type Ownership,
  type PartSizing,
  type PersistentVolume,
  type ReportedAttachment,
  type ReportedSnapshotContent,
  type ReportedVolume,
  type VolumeReport,
  type VolumeReportItem,
} from '../contract/index.js';
import { ebsVolumeIdOf } from '../migration/volume-of.js';
import { plain, type GroupSnapshotContentObject, type SnapshotContentObject } from './items.js';

export interface ReportSource {
  claims(): readonly V1PersistentVolumeClaim[];
  volumes(): readonly V1PersistentVolume[];
  attachments(): readonly V1VolumeAttachment[];
  csiNode(name: string): V1CSINode | undefined;
  /** The VolumeSnapshotContents (every driver's; ours are picked here). */
  snapshotContents(): readonly SnapshotContentObject[];
  /** The VolumeGroupSnapshotContents (every driver's; ours are picked here); none where the CRDs are not served. */
  groupSnapshotContents?(): readonly GroupSnapshotContentObject[];
}

/** The disk the report lists under this PV: undefined for a PV that is not ours or names none. */
export function reportedDiskOf(pv: V1PersistentVolume, ownership: Ownership): string | undefined {
  return isOurVolume(pv, ownership) ? volumeIdOf(pv, ownership.driver) : undefined;
}

export function buildVolumeReport(source: ReportSource, ownership: Ownership): VolumeReport {
  const volumes: ReportedVolume[] = [];
  const handles = new Map<string, string>();
  for (const pv of source.volumes()) {
    const name = pv.metadata?.name;
    if (!name) continue;
    const volumeId = reportedDiskOf(pv, ownership);
    if (!volumeId) continue;
    handles.set(name, volumeId);
    const claimRef = pv.spec?.claimRef;
    volumes.push({
      pv: name,
      ...(pv.metadata?.uid && { pvUid: pv.metadata.uid }),
      volumeId,
      reclaimPolicy: reclaimPolicy(pv),
      ...(pv.status?.phase && { phase: pv.status.phase }),
      ...(claimRef?.namespace && claimRef.name && { claim: { namespace: claimRef.namespace, name: claimRef.name, ...(claimRef.uid && { uid: claimRef.uid }) } }),
    });
  }
  const attachments: ReportedAttachment[] = [];
  for (const va of source.attachments()) {
    const name = va.metadata?.name;
    const pvName = va.spec?.source?.persistentVolumeName;
    if (!name || va.spec?.attacher !== ownership.driver || va.metadata?.deletionTimestamp) continue;
    // An inline volume's attachment names its disk itself (it has no PV).
    const inline = va.spec.source.inlineVolumeSpec?.csi;
    const volumeId = pvName ? handles.get(pvName) : inline?.driver === ownership.driver ? inline.volumeHandle || undefined : undefined;
    if (!volumeId) continue;
    const instanceId = source.csiNode(va.spec?.nodeName ?? '')?.spec?.drivers?.find((d) => d.name === ownership.driver)?.nodeID;
    attachments.push({ name, volumeId, ...(instanceId && { instanceId }), attached: va.status?.attached === true });
  }
  const claims = source
    .claims()
    .filter((pvc) => isClaimFor(pvc, ownership.provisioner))
    .flatMap((pvc) => (pvc.metadata?.uid ? [pvc.metadata.uid] : []));
  const snapshots = [...reportedContents(source.snapshotContents(), ownership.driver), ...reportedGroupContents(source.groupSnapshotContents?.() ?? [], ownership.driver)];
  return { volumes, attachments, claims, snapshots };
}

/** Every content of our driver with the snapshot it names, its policy, and whether a CreateSnapshot may be in flight. */
function reportedContents(contents: readonly SnapshotContentObject[], driver: string): ReportedSnapshotContent[] {
  return contents.flatMap((content) => {
    const name = content.metadata?.name;
    if (!name || !isOurContent(content, driver)) return [];
    const handle = content.status?.snapshotHandle || content.spec?.source?.snapshotHandle;
    const uid = content.metadata?.uid;
    const copy = snapshotCopyOf(content);
    return [
      {
        content: name,
        ...(uid && { contentUid: uid }),
        ...(handle && { snapshotHandle: handle }),
        deletionPolicy: content.spec?.deletionPolicy || 'Delete',
        readyToUse: content.status?.readyToUse === true,
        beingCreated: SnapshotAnnotations.beingCreated in (content.metadata?.annotations ?? {}),
        deleting: Boolean(content.metadata?.deletionTimestamp),
        ...(copy && { copy }),
      },
    ];
  });
}

/** Every group content of our driver, by the name its snapshots are tagged with (ReportedSnapshotContent `group`). */
function reportedGroupContents(contents: readonly GroupSnapshotContentObject[], driver: string): ReportedSnapshotContent[] {
  return contents.flatMap((content) => {
    const name = content.metadata?.name;
    if (!name || content.spec?.driver !== driver) return [];
    const uid = content.metadata?.uid;
    return [
      {
        content: name,
        ...(uid && { contentUid: uid }),
        deletionPolicy: content.spec?.deletionPolicy || 'Delete',
        readyToUse: content.status?.readyToUse === true,
        beingCreated: GroupSnapshotAnnotations.beingCreated in (content.metadata?.annotations ?? {}),
        deleting: Boolean(content.metadata?.deletionTimestamp),
        group: true as const,
      },
    ];
  });
}

/** The PV's disk, or undefined for a PV that names none (or a malformed in-tree ID). */
function volumeIdOf(pv: V1PersistentVolume, driver: string): string | undefined {
  try {
    return ebsVolumeIdOf(plain(pv) as unknown as PersistentVolume, driver);
  } catch {
    return undefined;
  }
}

/** A report being sent in parts: the same parts, read at the same moment, until the backend holds them all. */
interface InParts {
  digest: string;
  observedAt: number;
  parts: VolumeReport[];
  /** How they were measured: parts cut for gzip'd bodies are not sent in plain ones. */
  sizing: PartSizing;
  next: number;
  /** Parts sent so far; after two rounds without the backend holding them all, the report is read afresh. */
  sent: number;
}

/**
 * What a gzip'd part may compress to as the forwarder cuts it: a twentieth under what the backend
 * takes, in case its zlib compresses the same JSON a little worse.
 */
const GZIPPED_PART_TARGET = Math.floor(MAX_GZIPPED_PART_BYTES * 0.95);

type Sent = { digest: string; as: 'digest' | 'whole' | 'part' };

/**
 * When the backend needs the next report: `withinMs` after the answer at `answeredAt` (its
 * `reportWithinSeconds`, at most REPORT_WITHIN_MAX_SECONDS). Unknown (no answer yet, or one
 * without it — a backend that asks for none): every resync.
 */
type Wanted = { answeredAt: number; withinMs: number };

/**
 * Which digest the backend holds: the report item carries only the digest while the report
 * is the one last acknowledged (`done`), the whole report otherwise — in one item when it
 * fits in one part, else one part per turn of the report's key, the parts of one reading of
 * the caches in turn (the backend answers "requeue" until it holds every part, then `done`).
 */
export class ReportTracker {
  #acknowledged: string | undefined;
  #sent: Sent | undefined;
  #wanted: Wanted | undefined;
  #inParts: InParts | undefined;
  readonly #maxPartBytes: number;
  readonly #sizing: () => PartSizing;

  /**
   * `maxPartBytes`: what one part may weigh as JSON (smaller in tests, to send small reports in
   * parts). `sizing`: `gzip` while the backend takes gzip'd bodies — then parts are measured by
   * what they compress to, and up to {@link MAX_PARTS_PER_ITEM} go in one item.
   */
  constructor(options: { maxPartBytes?: number; sizing?: () => PartSizing } = {}) {
    this.#maxPartBytes = Math.min(options.maxPartBytes ?? MAX_REPORT_PART_BYTES, MAX_REPORT_PART_BYTES);
    this.#sizing = options.sizing ?? (() => 'json');
  }

  /** The item for the report (or what reads it), read from the caches at `observedAt` (epoch ms). */
  item(report: VolumeReport | (() => VolumeReport), observedAt: number): VolumeReportItem {
    const sizing = this.#sizing();
    const sending = this.#inParts;
    if (sending && sending.sizing === sizing && sending.sent < 2 * sending.parts.length) return this.#nextParts(sending);
    this.#inParts = undefined;
    const read = typeof report === 'function' ? report() : report;
    const canonical = canonicalReport(read);
    const digest = canonicalDigest(canonical);
    if (digest === this.#acknowledged) {
      this.#sent = { digest, as: 'digest' };
      return { kind: 'VolumeReport', digest, observedAt };
    }
    const parts = sizing === 'gzip' && this.#maxPartBytes === MAX_REPORT_PART_BYTES ? splitReportGzipped(canonical, GZIPPED_PART_TARGET) : splitReport(canonical, this.#maxPartBytes);
    if (parts.length === 1 && !reportItemProblem({ report: canonical, part: { index: 0, count: 1 } })) {
      this.#sent = { digest, as: 'whole' };
      return { kind: 'VolumeReport', digest, observedAt, report: read };
    }
    const inParts: InParts = { digest, observedAt, parts, sizing, next: 0, sent: 0 };
    this.#inParts = inParts;
    return this.#nextParts(inParts);
  }

  /** The next parts in turn: one, or with gzip'd bodies up to {@link MAX_PARTS_PER_ITEM}. */
  #nextParts(sending: InParts): VolumeReportItem {
    const count = sending.parts.length;
    // Never past the round's last part: the parts after it are the ones the backend already has.
    const take = Math.min(sending.sizing === 'gzip' ? MAX_PARTS_PER_ITEM : 1, count - sending.next);
    const indices = Array.from({ length: take }, (_, i) => (sending.next + i) % count);
    sending.next = (sending.next + take) % count;
    sending.sent += take;
    this.#sent = { digest: sending.digest, as: 'part' };
    const [first, ...rest] = indices as [number, ...number[]];
    return {
      kind: 'VolumeReport',
      digest: sending.digest,
      observedAt: sending.observedAt,
      report: sending.parts[first] as VolumeReport,
      part: { index: first, count },
      ...(rest.length > 0 && { more: rest.map((index) => ({ index, report: sending.parts[index] as VolumeReport })) }),
    };
  }

  /**
   * Whether a resync at `now` (epoch ms), the next one `resyncMs` later, offers the report's key:
   * while it goes in parts, when the backend acknowledged none or asked for one every resync, when
   * the backend needs it before the next resync, and when it changed (`report` read and digested).
   */
  due(report: () => VolumeReport, now: number, resyncMs: number): boolean {
    const wanted = this.#wanted;
    if (this.#inParts || this.#acknowledged === undefined || wanted === undefined) return true;
    if (now + resyncMs > wanted.answeredAt + wanted.withinMs) return true;
    return canonicalDigest(canonicalReport(report())) !== this.#acknowledged;
  }

  /**
   * The backend's answer to the last item: `done` means it holds that digest now, and
   * `reportWithinSeconds` how soon it needs the next (absent: every resync), answered at `now`.
   */
  answered(done: boolean, reportWithinSeconds?: number, now: number = Date.now()): void {
    this.#wanted = done && reportWithinSeconds !== undefined ? { answeredAt: now, withinMs: Math.min(reportWithinSeconds, REPORT_WITHIN_MAX_SECONDS) * 1000 } : undefined;
    const sent = this.#sent;
    if (!sent) return;
    if (done) {
      this.#acknowledged = sent.digest;
      if (this.#inParts?.digest === sent.digest) this.#inParts = undefined;
    } else if (sent.as !== 'part') {
      // A part not (yet) answered done is the backend waiting for the others: the next turn sends the next part.
      this.#acknowledged = undefined;
    }
  }
}
