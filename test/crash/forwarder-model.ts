/**
 * A model of the in-cluster forwarder, made of its real pure parts: the filters that say
 * which objects are ours and which are settled (lib/forwarder/filter.ts), which updates are
 * news (lib/forwarder/changes.ts), the item builders
 * (lib/forwarder/items.ts) over a `ClusterView` backed by the store, signing
 * (lib/contract/signing.ts), `matchResults`, and `applyWrites` over client-node against the
 * local API server.
 *
 * Each step it lists the objects and sends what its work queue would hand out: every object
 * of ours that changed since its last list (what a watch event offers at once — not when the
 * only change is what volhook wrote: the forwarder's echo filter, lib/forwarder/changes.ts, so
 * that write before act must progress by its requeue after 0 s alone), the keys
 * whose requeue time has come (`requeueAfterSeconds`, capped at 20 s; `requeue` after 0 s goes
 * again within the step), everything unsettled at each resync (every 40 s of simulated time),
 * and the `PersistentVolumeClaimDeleted` items it holds in memory. Those come, as in the real
 * forwarder, from the claims' watch: a claim of ours deleted while unbound. A restart (or a
 * crash) forgets that memory and everything else; while down the watch is not running, so a
 * claim deleted then is never seen deleted.
 *
 * Items that may delete a disk (a claim-deleted item, a protected claim that releases its
 * disk) get the PV's absence confirmed by a live read, as the real forwarder does.
 *
 * Batches are drawn at random (all due items in one request, or a few at a time); answers
 * are applied in order, one result after the other, letting the controllers react after
 * each. The model never lags behind the API server: its view is the store itself, a cache
 * that is never stale.
 */
import type { V1CSINode, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass, V1VolumeAttachment, V1VolumeAttributesClass } from '@kubernetes/client-node';
import * as z from 'zod';
import { ItemSchema, pvNameForClaim, ReconcileResponseSchema, sign, type ItemInput, type Result, type Write } from '../../lib/contract/index.js';
import { matchResults } from '../../lib/forwarder/backend-client.js';
import { isOurContent, isSettledContent, SNAPSHOT_COPY_ANNOTATION } from '../../lib/contract/index.js';
import { attachmentNews, claimNews, fingerprint, groupSnapshotContentNews, snapshotContentNews, volumeNews } from '../../lib/forwarder/changes.js';
import { isOurAttachment, isOurClaim, isOurGroupSnapshotContent, isOurVolume, isSettledAttachment, isSettledVolume, type Ownership } from '../../lib/forwarder/filter.js';
import {
  buildAttachmentItem,
  buildClaimDeletedItem,
  buildGroupSnapshotContentItem,
  buildClaimItem,
  sourceAwaitsRelease,
  buildSnapshotContentItem,
  buildVolumeItem,
  clusterZones,
  keys,
  type ClusterView,
  type DeletedClaim,
  type GroupSnapshotClassObject,
  type GroupSnapshotContentObject,
  type SnapshotContentObject,
} from '../../lib/forwarder/items.js';
import { applyWrites, WriteError } from '../../lib/kube/index.js';
import { buildVolumeReport, ReportTracker } from '../../lib/forwarder/report.js';
import { ItemKeys, reportDigest } from '../../lib/contract/index.js';
import { claimProvisioner, claimReleasesDisk, reconcileBody, withLivePvCheck } from './compat.js';
import type { CrashController } from './crashes.js';
import type { Rng } from './rng.js';
import { DRIVER, SECRET, type World } from './world.js';

const ownership: Ownership = { provisioner: DRIVER, driver: DRIVER };
/** The real forwarder resyncs every few minutes; here every 40 s of simulated time. */
const RESYNC_MS = 40_000;
/** Longest wait for a requeue or a failure (the real ones go up to minutes; runs are short). */
const MAX_WAIT_MS = 20_000;
/** After a backend error or a failed write (the real queue's first backoff). */
const ERROR_BACKOFF_MS = 1_000;
/**
 * What one part of the volume report may weigh here: the worlds are small, so their reports go
 * in several parts, and lost answers, restarts and duplicates meet a report coming in parts.
 */
const REPORT_PART_BYTES = 700;
/** Rounds in one step for items answered `requeue` after 0 s. */
const MAX_ROUNDS = 4;

/** The store holds plain JSON; client-node's types describe the same objects (dates as strings). */
type Resource =
  | 'persistentvolumeclaims'
  | 'persistentvolumes'
  | 'volumeattachments'
  | 'storageclasses'
  | 'nodes'
  | 'csinodes'
  | 'volumeattributesclasses'
  | 'volumesnapshots'
  | 'volumesnapshotcontents'
  | 'volumesnapshotclasses'
  | 'volumegroupsnapshotcontents'
  | 'volumegroupsnapshotclasses';

interface Candidate {
  key: string;
  /** Who it is about, in words that do not depend on uids (claim names, node names). */
  subject: string;
  /** Stable order: by subject, then kind. */
  order: string;
  build(): ItemInput | undefined | Promise<ItemInput | undefined>;
  /** For a claim-deleted item: the uid to forget once it is `done`. */
  deletedUid?: string;
  /** Its object changed since the last list: what a watch event would offer at once. */
  changed: boolean;
  /** The item of a VolumeGroupSnapshotContent. */
  group?: true;
}

interface Outgoing {
  key: string;
  subject: string;
  item: ItemInput;
  deletedUid?: string;
  group?: true;
}

export interface ForwarderStats {
  requests: number;
  items: number;
  outcomes: Record<string, number>;
  backendErrors: string[];
  writeErrors: string[];
  invalidItems: string[];
  restarts: number;
}

export class ForwarderModel {
  readonly stats: ForwarderStats = { requests: 0, items: 0, outcomes: {}, backendErrors: [], writeErrors: [], invalidItems: [], restarts: 0 };
  private deleted = new Map<string, DeletedClaim>();
  private seen = new Map<string, string | number>();
  private unwatch: (() => void) | undefined;
  /** The step from which a stopped forwarder runs again; undefined while running. */
  private upAt: number | undefined = 0;
  /** Bumped by every crash: work of an earlier incarnation stops when it sees it changed. */
  private incarnation = 0;
  /** User actions to run while this step's first requests are in flight. */
  private during: (() => Promise<void>) | undefined;
  /** Per key: when it may be sent again (its last answer's requeue, capped); a change sends it at once. */
  private readonly dueAt = new Map<string, number>();
  private lastResync: number;
  private readonly view: ClusterView;
  /** The volume report's digest as the backend acknowledged it (lost with the forwarder's memory). */
  private reports = new ReportTracker({ maxPartBytes: REPORT_PART_BYTES });

  constructor(
    private readonly world: World,
    private readonly crashes: CrashController,
    private readonly rng: Rng,
    private readonly trace: (line: string) => void,
    /** A readable subject for a PV or claim uid (claim names instead of uids). */
    private readonly claimNameOfUid: (uid: string) => string,
  ) {
    this.lastResync = world.clock.now();
    this.view = {
      storageClass: (name) => this.get<V1StorageClass>('storageclasses', name),
      node: (name) => this.get<V1Node>('nodes', name),
      csiNode: (name) => this.get<V1CSINode>('csinodes', name),
      pv: (name) => this.get<V1PersistentVolume>('persistentvolumes', name),
      volumeAttributesClass: (name) => this.get<V1VolumeAttributesClass>('volumeattributesclasses', name),
      attachmentsOf: (pvName) =>
        this.list<V1VolumeAttachment>('volumeattachments')
          .filter((va) => va.spec?.source?.persistentVolumeName === pvName)
          .map((va) => va.metadata?.name ?? ''),
      zones: () => clusterZones(this.list<V1Node>('nodes')),
      claim: (namespace, name) => this.get<V1PersistentVolumeClaim>('persistentvolumeclaims', name, namespace),
      claims: (namespace) => this.list<V1PersistentVolumeClaim>('persistentvolumeclaims').filter((pvc) => pvc.metadata?.namespace === namespace),
      volumeSnapshot: (namespace, name) => this.get('volumesnapshots', name, namespace),
      snapshotContent: (name) => this.get('volumesnapshotcontents', name),
      snapshotClass: (name) => this.get('volumesnapshotclasses', name),
      groupSnapshotClass: (name) => this.get<GroupSnapshotClassObject>('volumegroupsnapshotclasses', name),
      pvs: () => this.list<V1PersistentVolume>('persistentvolumes'),
    };
  }

  private get<T>(resource: Resource, name: string, namespace?: string): T | undefined {
    return this.world.store.get(resource, name, namespace) as unknown as T | undefined;
  }

  private list<T>(resource: Resource): T[] {
    return this.world.store.list(resource).items as unknown as T[];
  }

  get running(): boolean {
    return this.unwatch !== undefined;
  }

  /** Stops the forwarder as a crash would (its memory is lost); it starts afresh at step `upAt`. */
  crash(upAt: number, why: string): void {
    this.unwatch?.();
    this.unwatch = undefined;
    this.incarnation++;
    this.deleted.clear();
    this.seen.clear();
    this.dueAt.clear();
    this.reports = new ReportTracker({ maxPartBytes: REPORT_PART_BYTES });
    this.upAt = upAt;
    this.stats.restarts++;
    this.trace(`forwarder down (${why}); up again at step ${upAt}`);
  }

  private ensureUp(step: number): boolean {
    if (this.unwatch) return true;
    if (this.upAt === undefined || step < this.upAt) return false;
    this.upAt = undefined;
    // The informer's watch: a claim of ours deleted while unbound becomes a claim-deleted item.
    this.unwatch = this.world.store.watch('persistentvolumeclaims', {}, (event) => {
      if (event.type !== 'DELETED') return;
      const pvc = event.object as unknown as V1PersistentVolumeClaim;
      const meta = pvc.metadata;
      if (!meta?.uid || !meta.name || !meta.namespace) return;
      if (claimProvisioner(pvc) !== ownership.provisioner || pvc.spec?.volumeName) return;
      this.deleted.set(meta.uid, { uid: meta.uid, namespace: meta.namespace, name: meta.name });
      this.trace(`forwarder: claim ${meta.name} deleted (watch)`);
    });
    return true;
  }

  /** A claim the forwarder offers (the real filter: after issue 8 it also keeps protected claims). */
  private offersClaim(pvc: V1PersistentVolumeClaim): boolean {
    return isOurClaim(pvc, ownership, (name) => this.get<V1PersistentVolume>('persistentvolumes', name), (claim) => sourceAwaitsRelease(claim, this.view));
  }

  /** A live GET of the PV, as the real forwarder's `readPv`. */
  private readonly readPv = async (name: string) => this.world.store.get('persistentvolumes', name) !== undefined;

  private async claimItem(pvc: V1PersistentVolumeClaim): Promise<ItemInput> {
    const item = buildClaimItem(pvc, this.view, DRIVER);
    return claimReleasesDisk(pvc) ? withLivePvCheck(item as never, pvNameForClaim(pvc.metadata?.uid ?? ''), this.readPv) : item;
  }

  private async deletedItem(claim: DeletedClaim): Promise<ItemInput> {
    return withLivePvCheck(buildClaimDeletedItem(claim, this.view) as never, pvNameForClaim(claim.uid), this.readPv);
  }

  private subjectOfPv(pv: V1PersistentVolume | undefined, fallback: string): string {
    const ref = pv?.spec?.claimRef;
    return ref?.name ? `${ref.name}'s PV` : fallback;
  }

  /**
   * Every object of ours that is unsettled or changed, and the claim-deleted items in memory.
   * `mark`: remember what was seen (a list); false only peeks (changes stay news for the next step).
   */
  private collect(mark = true): Candidate[] {
    const out: Candidate[] = [];
    const changed = (key: string, print: string | number) => {
      const before = this.seen.get(key);
      if (mark) this.seen.set(key, print);
      return before !== print;
    };
    for (const pvc of this.list<V1PersistentVolumeClaim>('persistentvolumeclaims')) {
      const namespace = pvc.metadata?.namespace ?? '';
      const name = pvc.metadata?.name ?? '';
      const key = keys.claim(namespace, name);
      const isChanged = changed(key, fingerprint(claimNews(pvc, ownership)));
      if (!this.offersClaim(pvc)) continue;
      out.push({
        key,
        changed: isChanged,
        subject: `claim ${name}`,
        order: `${name}/1`,
        build: () => {
          const now = this.get<V1PersistentVolumeClaim>('persistentvolumeclaims', name, namespace);
          return now && this.offersClaim(now) ? this.claimItem(now) : undefined;
        },
      });
    }
    for (const claim of this.deleted.values()) {
      out.push({
        key: keys.claimDeleted(claim.uid),
        changed: false,
        subject: `claim ${claim.name} (deleted)`,
        order: `${claim.name}/0`,
        build: () => this.deletedItem(claim),
        deletedUid: claim.uid,
      });
    }
    for (const pv of this.list<V1PersistentVolume>('persistentvolumes')) {
      const name = pv.metadata?.name ?? '';
      const key = keys.volume(name);
      const isChanged = changed(key, fingerprint(volumeNews(pv, ownership)));
      if (!isOurVolume(pv, ownership) || (isSettledVolume(pv) && !isChanged)) continue;
      const subject = this.subjectOfPv(pv, `PV ${name}`);
      out.push({
        key,
        changed: isChanged,
        subject,
        order: `${pv.spec?.claimRef?.name ?? name}/2`,
        build: () => {
          const now = this.get<V1PersistentVolume>('persistentvolumes', name);
          return now && isOurVolume(now, ownership) ? buildVolumeItem(now, this.view) : undefined;
        },
      });
    }
    for (const va of this.list<V1VolumeAttachment>('volumeattachments')) {
      const name = va.metadata?.name ?? '';
      const key = keys.attachment(name);
      const isChanged = changed(key, fingerprint(attachmentNews(va, ownership)));
      if (!isOurAttachment(va, ownership) || (isSettledAttachment(va, ownership) && !isChanged)) continue;
      const pvName = va.spec?.source?.persistentVolumeName ?? '';
      const pv = this.get<V1PersistentVolume>('persistentvolumes', pvName);
      const subject = `VA of ${this.subjectOfPv(pv, pvName)} on ${va.spec?.nodeName}`;
      out.push({
        key,
        changed: isChanged,
        subject,
        order: `${pv?.spec?.claimRef?.name ?? this.claimNameOfUid(pvName.replace(/^pvc-/, ''))}/3/${va.spec?.nodeName}`,
        build: () => {
          const now = this.get<V1VolumeAttachment>('volumeattachments', name);
          return now && isOurAttachment(now, ownership) ? buildAttachmentItem(now, this.view, DRIVER) : undefined;
        },
      });
    }
    for (const content of this.list<SnapshotContentObject>('volumesnapshotcontents')) {
      const name = content.metadata?.name ?? '';
      const key = keys.snapshotContent(name);
      const isChanged = changed(key, fingerprint(snapshotContentNews(content, ownership)));
      if (!isOurContent(content, DRIVER) || (isSettledContent(content) && !isChanged)) continue;
      const vs = content.spec?.volumeSnapshotRef?.name ?? name;
      out.push({
        key,
        changed: isChanged,
        subject: `content of ${vs}`,
        order: `${vs}/4`,
        build: () => {
          const now = this.get<SnapshotContentObject>('volumesnapshotcontents', name);
          return now && isOurContent(now, DRIVER) ? buildSnapshotContentItem(now, this.view) : undefined;
        },
      });
    }
    for (const content of this.list<GroupSnapshotContentObject>('volumegroupsnapshotcontents')) {
      const name = content.metadata?.name ?? '';
      const key = keys.groupSnapshotContent(name);
      const isChanged = changed(key, fingerprint(groupSnapshotContentNews(content, ownership)));
      if (!isOurGroupSnapshotContent(content, ownership) || (isSettledContent(content) && !isChanged)) continue;
      const group = content.spec?.volumeGroupSnapshotRef?.name ?? name;
      out.push({
        key,
        changed: isChanged,
        subject: `group content of ${group}`,
        order: `${group}/5`,
        group: true,
        build: () => {
          const now = this.get<GroupSnapshotContentObject>('volumegroupsnapshotcontents', name);
          return now && isOurGroupSnapshotContent(now, ownership) ? buildGroupSnapshotContentItem(now, this.view, DRIVER) : undefined;
        },
      });
    }
    // The volume report (for the audit): offered when it changed, and on resync.
    const report = () =>
      buildVolumeReport(
        {
          claims: () => this.list<V1PersistentVolumeClaim>('persistentvolumeclaims'),
          volumes: () => this.list<V1PersistentVolume>('persistentvolumes'),
          attachments: () => this.list<V1VolumeAttachment>('volumeattachments'),
          csiNode: (name) => this.get<V1CSINode>('csinodes', name),
          snapshotContents: () => this.list<SnapshotContentObject>('volumesnapshotcontents'),
          groupSnapshotContents: () => this.list<GroupSnapshotContentObject>('volumegroupsnapshotcontents'),
        },
        ownership,
      );
    out.push({
      key: ItemKeys.report(),
      changed: changed(ItemKeys.report(), reportDigest(report())),
      subject: 'volume report',
      order: '~report',
      build: () => this.reports.item(report(), this.world.clock.now()),
    });
    return out.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
  }

  private async toOutgoing(candidate: Candidate): Promise<Outgoing | undefined> {
    const item = await candidate.build();
    if (!item) return undefined;
    const checked = ItemSchema.safeParse(item);
    if (!checked.success) {
      if (this.stats.invalidItems.length < 5) {
        this.stats.invalidItems.push(`${candidate.subject}: ${z.prettifyError(checked.error)}`);
      }
      return undefined;
    }
    return { key: candidate.key, subject: candidate.subject, item, ...(candidate.deletedUid ? { deletedUid: candidate.deletedUid } : {}), ...(candidate.group ? { group: true as const } : {}) };
  }

  /**
   * One forwarder step. `during`: what happens in the cluster while the step's first requests
   * are in flight — after the backend answered, before the answers' writes are applied (run
   * after the step when it sends nothing).
   */
  async step(step: number, during?: () => Promise<void>): Promise<number> {
    this.during = during;
    const before = this.stats.requests;
    try {
      await this.stepInner(step);
    } finally {
      await this.runDuring();
    }
    return this.stats.requests - before;
  }

  /** The earliest time a known key is due again (a change or a resync may come sooner). */
  nextDueAt(): number {
    let next = this.lastResync + RESYNC_MS;
    for (const at of this.dueAt.values()) next = Math.min(next, at);
    return next;
  }

  private async runDuring(): Promise<void> {
    const during = this.during;
    this.during = undefined;
    if (during) await during();
  }

  private async stepInner(step: number): Promise<void> {
    if (!this.ensureUp(step)) return;
    const now = this.world.clock.now();
    if (now - this.lastResync >= RESYNC_MS) {
      // The periodic resync: every unsettled object is offered again.
      this.lastResync = now;
      this.dueAt.clear();
    }
    const all = this.collect();
    let candidates = all.filter((c) => c.changed || (this.dueAt.get(c.key) ?? 0) <= now);
    const groupItems = candidates.filter((c) => c.group);
    const dupPlan = candidates.length > 0 ? this.crashes.duplicateAt(step, groupItems.length > 0) : undefined;
    const dupOf = dupPlan?.group ? (groupItems[Math.floor(dupPlan.pick * groupItems.length)] as Candidate) : dupPlan && candidates[Math.floor(dupPlan.pick * candidates.length)];
    const dup = dupOf ? candidates.splice(candidates.indexOf(dupOf), 1)[0] : undefined;

    for (let round = 0; round < MAX_ROUNDS && candidates.length > 0; round++) {
      // The queue hands out batches: all at once, or a few at a time.
      const batches: Candidate[][] = [];
      if (this.rng.chance(0.5)) batches.push(candidates);
      else {
        for (let i = 0; i < candidates.length; ) {
          const n = this.rng.int(1, 3);
          batches.push(candidates.slice(i, i + n));
          i += n;
        }
      }
      const again = new Set<string>();
      for (const batch of batches) {
        const outgoing: Outgoing[] = [];
        for (const c of batch) {
          const o = await this.toOutgoing(c);
          if (o) outgoing.push(o);
          else this.dueAt.set(c.key, Infinity);
        }
        if (outgoing.length > 0 && !(await this.exchange(step, [outgoing], again))) return;
      }
      // What asked to be sent again at once goes in the same step.
      candidates = this.collect(false).filter((c) => again.has(c.key));
    }
    if (dup && dupPlan) {
      const first = await this.toOutgoing(dup);
      const second = await this.toOutgoing(dup);
      if (first && second) {
        this.crashes.fired(dupPlan, `${dup.subject}, at step ${step}`);
        this.trace(`forwarder: ${dup.subject} sent twice at once`);
        await this.exchange(step, [[first], [second]], new Set());
      }
    }
  }

  /** When the key may go again, after this answer (the work queue's requeue and backoff). */
  private schedule(key: string, result: Result | undefined, again: Set<string>): void {
    const now = this.world.clock.now();
    if (key === ItemKeys.report()) this.reports.answered(result?.outcome === 'done');
    if (!result) {
      this.dueAt.set(key, now + ERROR_BACKOFF_MS);
      return;
    }
    if (result.outcome === 'done') {
      // Until its object changes, or the resync.
      this.dueAt.set(key, Infinity);
      return;
    }
    const seconds = result.requeueAfterSeconds ?? MAX_WAIT_MS / 1000;
    if (seconds === 0) again.add(key);
    this.dueAt.set(key, now + Math.min(seconds * 1000, MAX_WAIT_MS));
  }

  /**
   * The claim is deleted while its item is in flight: the claim's item is built before the
   * claim (and its pods) are deleted, what the forwarder would send next about it after, and
   * both go at once in two requests. Undefined when there was nothing to race (the forwarder
   * is down, or the claim is no longer one it offers); otherwise what went with it.
   */
  async race(step: number, claimName: string, deleteAll: () => Promise<void>): Promise<string | undefined> {
    if (!this.ensureUp(step)) return undefined;
    const pvc = this.get<V1PersistentVolumeClaim>('persistentvolumeclaims', claimName, 'default');
    if (!pvc || !this.offersClaim(pvc)) return undefined;
    const inFlight: Outgoing = { key: keys.claim('default', claimName), subject: `claim ${claimName}`, item: await this.claimItem(pvc) };
    const uid = pvc.metadata?.uid ?? '';
    await deleteAll();
    const after = this.get<V1PersistentVolumeClaim>('persistentvolumeclaims', claimName, 'default');
    let next: Outgoing | undefined;
    let detail: string;
    if (!after) {
      next = { key: keys.claimDeleted(uid), subject: `claim ${claimName} (deleted)`, item: await this.deletedItem({ uid, namespace: 'default', name: claimName }), deletedUid: uid };
      detail = 'with its claim-deleted item';
    } else if (this.offersClaim(after)) {
      next = { key: keys.claim('default', claimName), subject: `claim ${claimName} (terminating)`, item: await this.claimItem(after) };
      detail = 'with its terminating claim item';
    } else {
      detail = 'alone (the terminating claim is not offered)';
    }
    this.trace(`forwarder: claim ${claimName} item in flight ${detail}`);
    await this.exchange(step, next ? [[inFlight], [next]] : [[inFlight]], new Set());
    return detail;
  }

  private async post(items: ItemInput[]): Promise<Result[] | string> {
    const { clusterId } = this.world;
    // The forwarder's body: the cluster id is part of what is signed (issue 8).
    const body = reconcileBody(clusterId, items);
    const response = await this.world.app.request(`/v1/clusters/${clusterId}/reconcile`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...sign(body, SECRET, { now: Math.floor(this.world.clock.now() / 1000) }) },
      body,
    });
    const text = await response.text();
    if (!response.ok) return `HTTP ${response.status}: ${text.slice(0, 300)}`;
    const parsed = ReconcileResponseSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.results : `malformed response: ${z.prettifyError(parsed.error).slice(0, 300)}`;
  }

  /**
   * Sends each request (all at once), then applies the answers in order. False when the
   * forwarder crashed while applying (the rest is dropped).
   */
  private async exchange(step: number, requests: Outgoing[][], again: Set<string>): Promise<boolean> {
    const incarnation = this.incarnation;
    this.stats.requests += requests.length;
    const answers = await Promise.all(requests.map((items) => this.post(items.map((o) => o.item))));
    if (this.during) {
      this.trace('cluster changes while requests are in flight');
      await this.runDuring();
      if (this.incarnation !== incarnation) return false;
    }
    for (const [r, answer] of answers.entries()) {
      const sent = requests[r] as Outgoing[];
      this.stats.items += sent.length;
      if (typeof answer === 'string') {
        if (this.stats.backendErrors.length < 5) this.stats.backendErrors.push(answer);
        this.trace(`backend error: ${answer.slice(0, 80)}`);
        for (const out of sent) this.schedule(out.key, undefined, again);
        continue;
      }
      const matched = matchResults(sent.map((o) => o.key), answer);
      for (const out of sent) {
        const result = matched.get(out.key);
        if (!result) {
          if (this.stats.backendErrors.length < 5) this.stats.backendErrors.push(`no result for ${out.key}`);
          this.schedule(out.key, undefined, again);
          continue;
        }
        this.stats.outcomes[result.outcome] = (this.stats.outcomes[result.outcome] ?? 0) + 1;
        const why = result.outcome === 'done' ? '' : ` (${result.requeueAfterSeconds ?? '-'} s: ${(result.message ?? '').slice(0, 100)})`;
        this.trace(`result ${out.subject}: ${result.outcome}${why}${result.writes.length ? ` [${result.writes.map(describeWrite).join(', ')}]` : ''}`);
        // A result that records a cross-Region copy on its content is told apart: its crash points are the copy's.
        const copyWrite = result.writes.some((w) => w.op === 'setAnnotation' && w.key === SNAPSHOT_COPY_ANNOTATION);
        const cut = this.crashes.beforeWrites(result.writes.length, out.subject, out.group === true, copyWrite);
        if (cut !== undefined) {
          await this.apply(result.writes.slice(0, cut), out.subject);
          this.crash(step + 1 + this.rng.weighted([[0, 6], [1, 3], [2, 1]] as const), `crashed after ${cut} of ${result.writes.length} writes for ${out.subject}`);
          return false;
        }
        const ok = await this.apply(result.writes, out.subject);
        if (this.incarnation !== incarnation) return false;
        this.schedule(out.key, ok ? result : undefined, again);
        if (ok && out.deletedUid && result.outcome === 'done') this.deleted.delete(out.deletedUid);
      }
    }
    return true;
  }

  private async apply(writes: readonly Write[], subject: string): Promise<boolean> {
    if (writes.length === 0) return true;
    try {
      await applyWrites(this.world.clients, writes, { eventCorrelator: this.world.correlator });
      return true;
    } catch (err) {
      const message = err instanceof WriteError ? err.message : String(err);
      if (this.stats.writeErrors.length < 5) this.stats.writeErrors.push(`${subject}: ${message.slice(0, 200)}`);
      this.trace(`write failed for ${subject}: ${message.slice(0, 120)}`);
      return false;
    } finally {
      await this.world.settle();
    }
  }
}

function describeWrite(w: Write): string {
  switch (w.op) {
    case 'addFinalizer':
    case 'removeFinalizer':
      return `${w.op === 'addFinalizer' ? '+' : '-'}${w.finalizer.split('/')[0]}@${w.target.kind}`;
    case 'createEvent':
      return `event ${w.reason}`;
    default:
      return w.op;
  }
}
