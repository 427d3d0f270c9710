import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.js';
import type { AttachFaultRule, CreateFaultRule, LatencyTable, SnapshotFaultRule, ZoneInfo } from './config.js';
import { ec2Errors } from './errors.js';
import type {
  Attachment,
  ClientTokenRecord,
  FastSnapshotRestore,
  Instance,
  ScheduledEvent,
  Snapshot,
  Volume,
  VolumeModification,
  WorldState,
} from './model.js';
import { drawLatency, type Random } from './random.js';

/** The knobs the rules read; the simulator changes them at run time. */
export interface WorldEnv {
  clock: Clock;
  rng: Random;
  region: string;
  accountId: string;
  zones: readonly ZoneInfo[];
  timeScale: number;
  latency: LatencyTable;
  createFaults: CreateFaultRule[];
  attachFaults: AttachFaultRule[];
  snapshotFaults: SnapshotFaultRule[];
  attachmentSlots: number;
  /** The rolling window (simulated ms) in which a volume may be modified four times. */
  modificationWindowMs: number;
  /**
   * The same account's world in another Region the simulator holds (CopySnapshot reads its
   * source there), brought up to now; undefined for a Region it does not hold. Set by the simulator.
   */
  otherRegion?: (region: string) => World | undefined;
}

/** Simulated time kept for things EC2 forgets slowly. */
const TERMINATED_VISIBLE_MS = 60 * 60 * 1000;
const CLIENT_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;

type EventInput = ScheduledEvent extends infer E ? (E extends ScheduledEvent ? Omit<E, 'at' | 'seq'> : never) : never;

/**
 * The records of the simulated account and the clock-driven changes still due. Time moves
 * lazily: every read or write first applies the events that are due, so the world needs no
 * timers, replays exactly under a manual clock, and resumes after a restart from its events.
 */
export class World {
  readonly volumes = new Map<string, Volume>();
  readonly instances = new Map<string, Instance>();
  readonly modifications = new Map<string, VolumeModification>();
  readonly clientTokens = new Map<string, ClientTokenRecord>();
  readonly snapshots = new Map<string, Snapshot>();
  /** Keyed `<snapshot id> <zone>`. */
  readonly fastRestores = new Map<string, FastSnapshotRestore>();
  private events: ScheduledEvent[] = [];
  private seq = 0;
  private listeners: (() => void)[] = [];

  constructor(readonly env: WorldEnv) {}

  now(): number {
    return this.env.clock.now();
  }

  /** This world, or the same account's in another Region the simulator holds. */
  inRegion(region: string): World | undefined {
    return region === this.env.region ? this : this.env.otherRegion?.(region);
  }

  /** Simulated milliseconds as wall milliseconds at the current scale. */
  wall(simMs: number): number {
    return simMs / this.env.timeScale;
  }

  nextSeq(): number {
    return ++this.seq;
  }

  newId(prefix: 'vol' | 'i' | 'r' | 'snap'): string {
    for (;;) {
      const id = `${prefix}-${randomBytes(9).toString('hex').slice(0, 17)}`;
      if (!this.volumes.has(id) && !this.instances.has(id) && !this.snapshots.has(id)) return id;
    }
  }

  zone(name: string): ZoneInfo | undefined {
    return this.env.zones.find((z) => z.name === name);
  }

  latency(kind: keyof LatencyTable): number {
    return this.wall(drawLatency(this.env.latency[kind], this.env.rng));
  }

  /** Called after every change, e.g. to persist. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  changed(): void {
    for (const l of this.listeners) l();
  }

  /** Queues a change `delayWallMs` after `from` (default now). */
  schedule(event: EventInput, delayWallMs: number, from = this.now()): void {
    const e = { ...event, at: from + Math.max(0, delayWallMs), seq: this.nextSeq() } as ScheduledEvent;
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.events[mid] as ScheduledEvent).at <= e.at) lo = mid + 1;
      else hi = mid;
    }
    this.events.splice(lo, 0, e);
  }

  pendingEvents(): readonly ScheduledEvent[] {
    return this.events;
  }

  /** Applies every event due by now, in time order. */
  advance(): void {
    const now = this.now();
    let applied = false;
    while (this.events.length > 0 && (this.events[0] as ScheduledEvent).at <= now) {
      this.apply(this.events.shift() as ScheduledEvent);
      applied = true;
    }
    this.expireTokens(now);
    if (applied) this.changed();
  }

  getVolume(id: string): Volume {
    if (!/^vol-[0-9a-f]+$/.test(id)) throw ec2Errors.volumeMalformed(id);
    const v = this.volumes.get(id);
    if (!v) throw ec2Errors.volumeNotFound(id);
    return v;
  }

  getSnapshot(id: string): Snapshot {
    if (!/^snap-[0-9a-f]+$/.test(id)) throw ec2Errors.snapshotMalformed(id);
    const snap = this.snapshots.get(id);
    if (!snap) throw ec2Errors.snapshotNotFound(id);
    return snap;
  }

  /** Removes a snapshot and the fast snapshot restores that go with it. */
  dropSnapshot(id: string): void {
    this.snapshots.delete(id);
    for (const [key, f] of this.fastRestores) if (f.snapshotId === id) this.fastRestores.delete(key);
  }

  getInstance(id: string): Instance {
    if (!/^i-[0-9a-f]+$/.test(id)) throw ec2Errors.instanceMalformed(id);
    const i = this.instances.get(id);
    if (!i) throw ec2Errors.instanceNotFound(id);
    return i;
  }

  /** Every attachment on the instance, in any state, with its volume. */
  attachmentsOn(instanceId: string): { volume: Volume; attachment: Attachment }[] {
    const out: { volume: Volume; attachment: Attachment }[] = [];
    for (const volume of this.volumes.values()) {
      for (const attachment of volume.attachments) {
        if (attachment.instanceId === instanceId) out.push({ volume, attachment });
      }
    }
    return out;
  }

  snapshot(): WorldState {
    return structuredClone({
      version: 1,
      seq: this.seq,
      volumes: [...this.volumes.values()],
      instances: [...this.instances.values()],
      modifications: [...this.modifications.values()],
      clientTokens: Object.fromEntries(this.clientTokens),
      events: this.events,
      snapshots: [...this.snapshots.values()],
      fastSnapshotRestores: [...this.fastRestores.values()],
    });
  }

  restore(state: WorldState): void {
    this.clear();
    const s = structuredClone(state);
    this.seq = s.seq;
    for (const v of s.volumes) this.volumes.set(v.id, v);
    for (const i of s.instances) this.instances.set(i.id, i);
    for (const m of s.modifications) this.modifications.set(m.volumeId, m);
    for (const [k, t] of Object.entries(s.clientTokens)) this.clientTokens.set(k, t);
    for (const snap of s.snapshots ?? []) this.snapshots.set(snap.id, snap);
    for (const f of s.fastSnapshotRestores ?? []) this.fastRestores.set(`${f.snapshotId} ${f.zone}`, f);
    this.events = s.events.sort((a, b) => a.at - b.at || a.seq - b.seq);
  }

  clear(): void {
    this.volumes.clear();
    this.instances.clear();
    this.modifications.clear();
    this.clientTokens.clear();
    this.snapshots.clear();
    this.fastRestores.clear();
    this.events = [];
  }

  private lastExpiry = -Infinity;

  /** At most once a simulated minute: a scan per request would cost more than it saves. */
  private expireTokens(now: number): void {
    if (now - this.lastExpiry < this.wall(60_000)) return;
    this.lastExpiry = now;
    const ttl = this.wall(CLIENT_TOKEN_TTL_MS);
    for (const [token, record] of this.clientTokens) {
      if (now - record.at > ttl) this.clientTokens.delete(token);
    }
  }

  private apply(e: ScheduledEvent): void {
    switch (e.kind) {
      case 'volume-created': {
        const v = this.volumes.get(e.volumeId);
        if (!v || v.state !== 'creating') return;
        if (e.outcome === 'vanish') this.volumes.delete(v.id);
        else v.state = e.outcome;
        return;
      }
      case 'volume-deleted': {
        const v = this.volumes.get(e.volumeId);
        if (v?.state === 'deleting') this.volumes.delete(v.id);
        return;
      }
      case 'attached': {
        const a = this.findAttachment(e.volumeId, e.instanceId, e.epoch);
        if (a?.state === 'attaching' && !a.stuck) a.state = 'attached';
        return;
      }
      case 'detached': {
        const v = this.volumes.get(e.volumeId);
        const a = this.findAttachment(e.volumeId, e.instanceId, e.epoch);
        if (!v || a?.state !== 'detaching') return;
        v.attachments = v.attachments.filter((x) => x !== a);
        if (v.attachments.length === 0 && v.state === 'in-use') v.state = 'available';
        return;
      }
      case 'modification-optimizing': {
        const m = this.modifications.get(e.volumeId);
        const v = this.volumes.get(e.volumeId);
        if (!m || !v || m.startTime !== e.startTime || m.state !== 'modifying') return;
        m.state = 'optimizing';
        m.progress = 50;
        v.size = m.target.size;
        v.type = m.target.type;
        v.iops = m.target.iops;
        v.throughput = m.target.throughput;
        v.multiAttach = m.target.multiAttach;
        return;
      }
      case 'modification-completed': {
        const m = this.modifications.get(e.volumeId);
        if (!m || m.startTime !== e.startTime || m.state !== 'optimizing') return;
        m.state = 'completed';
        m.progress = 100;
        m.endTime = e.at;
        return;
      }
      case 'instance-running': {
        const i = this.instances.get(e.instanceId);
        if (i?.state === 'pending') i.state = 'running';
        return;
      }
      case 'instance-terminated': {
        const i = this.instances.get(e.instanceId);
        if (!i || i.state !== 'shutting-down') return;
        i.state = 'terminated';
        for (const { volume, attachment } of this.attachmentsOn(i.id)) {
          volume.attachments = volume.attachments.filter((a) => a !== attachment);
          if (attachment.deleteOnTermination) this.volumes.delete(volume.id);
          else if (volume.attachments.length === 0 && volume.state === 'in-use') volume.state = 'available';
        }
        this.schedule({ kind: 'instance-purged', instanceId: i.id }, this.wall(TERMINATED_VISIBLE_MS), e.at);
        return;
      }
      case 'snapshot-completed': {
        const snap = this.snapshots.get(e.snapshotId);
        if (!snap || snap.state !== 'pending') return;
        if (snap.deleteRequested) {
          this.dropSnapshot(snap.id);
          return;
        }
        snap.state = e.outcome;
        snap.completionTime = e.at;
        if (e.outcome === 'error') {
          snap.statusMessage = 'Snapshot creation failed.';
          for (const [key, f] of this.fastRestores) if (f.snapshotId === snap.id) this.fastRestores.delete(key);
          return;
        }
        for (const f of this.fastRestores.values()) {
          if (f.snapshotId !== snap.id || f.state !== 'enabling') continue;
          this.schedule({ kind: 'fsr-optimizing', snapshotId: snap.id, zone: f.zone, epoch: f.seq }, this.latency('fsrEnable'), e.at);
        }
        return;
      }
      case 'fsr-optimizing': {
        const f = this.fastRestores.get(`${e.snapshotId} ${e.zone}`);
        const snap = this.snapshots.get(e.snapshotId);
        if (!f || !snap || f.seq !== e.epoch || f.state !== 'enabling') return;
        f.state = 'optimizing';
        f.stateTransitionReason = 'Client.UserInitiated - Lifecycle state transition';
        f.optimizingTime = e.at;
        const perTiB = this.latency('fsrOptimizePerTiB');
        this.schedule({ kind: 'fsr-enabled', snapshotId: e.snapshotId, zone: e.zone, epoch: e.epoch }, perTiB * Math.max(1, snap.volumeSize / 1024), e.at);
        return;
      }
      case 'fsr-enabled': {
        const f = this.fastRestores.get(`${e.snapshotId} ${e.zone}`);
        if (!f || f.seq !== e.epoch || f.state !== 'optimizing') return;
        f.state = 'enabled';
        f.stateTransitionReason = 'Client.UserInitiated - Lifecycle state transition';
        f.enabledTime = e.at;
        return;
      }
      case 'instance-purged': {
        if (this.instances.get(e.instanceId)?.state === 'terminated') this.instances.delete(e.instanceId);
        return;
      }
    }
  }

  private findAttachment(volumeId: string, instanceId: string, epoch: number): Attachment | undefined {
    return this.volumes
      .get(volumeId)
      ?.attachments.find((a) => a.instanceId === instanceId && a.epoch === epoch);
  }
}
