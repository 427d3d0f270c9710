/**
 * Which updates are news. The forwarder offers an object again when an update changed
 * something that can change the backend's answer — not when the only change is what volhook
 * itself wrote.
 *
 * **Echoes.** Every write the backend asks for (a finalizer, a VolumeAttachment's status, the
 * node-id annotation) comes back through the watch as an update of its object. external-attacher
 * ignores the events its own writes cause, and so does the forwarder: offering them cost a
 * round trip and two describes per write, and an echo cut short the wait the backend had
 * asked for. A refused attach wrote `attachError` (with a new time) on every try, and its echo
 * sent the attachment again at once instead of after the 60 s requeue: a retry storm.
 *
 * **Write before act still works.** When the backend must see its own write applied before it
 * acts (the claim's protection before CreateVolume, the attacher finalizers and node-id before
 * AttachVolume), it answers `requeue` after 0 s, and the queue sends the key again because of
 * that answer — never because of the echo. Should the cache not hold the write yet when the
 * key goes, the backend asks for the same write again (a no-op) and requeues once more.
 *
 * What volhook writes, and so what an echo may change: the finalizers below (a restore's or
 * clone's source protection among them), the node-id
 * annotation, a VolumeAttachment's whole `status` (only the attacher writes it), and the
 * bookkeeping of any write (`resourceVersion`, `managedFields`, `generation`). Anything else —
 * a deletionTimestamp, the binding, a selected node, labels — is news.
 */
import { createHash } from 'node:crypto';
import type * as k8s from '@kubernetes/client-node';
import { GroupSnapshotAnnotations, SnapshotAnnotations, SourceFinalizers } from '../contract/index.js';
import { Annotations, Finalizers, VolhookAnnotations, type Ownership } from '../contract/index.js';

/** An informer event, as the table of watched resources sees it. */
export type EventType = 'add' | 'update' | 'delete';

/** Finalizers volhook adds and removes (on claims, PVs and VolumeAttachments; a restore's or clone's source). */
export function volhookFinalizers(driver: string): ReadonlySet<string> {
  return new Set([Finalizers.claimProtection, Finalizers.provisioner, Finalizers.attacher(driver), SourceFinalizers.snapshot, SourceFinalizers.claim]);
}

/** Annotations volhook sets; the selected-node annotation it may remove is the scheduler's, and news. */
const VOLHOOK_ANNOTATIONS: ReadonlySet<string> = new Set([Annotations.attachedNodeId, VolhookAnnotations.claimTags]);

/** The parts of an object whose change is news: all but what volhook writes. */
export function withoutVolhookWrites(object: k8s.KubernetesObject, ownership: Pick<Ownership, 'driver'>, options: { status?: 'drop' } = {}): unknown {
  const { metadata, ...rest } = object as k8s.KubernetesObject & { status?: unknown };
  const { resourceVersion: _rv, managedFields: _mf, generation: _gen, finalizers, annotations, ...meta } = metadata ?? {};
  const ours = volhookFinalizers(ownership.driver);
  if (options.status === 'drop') delete (rest as { status?: unknown }).status;
  return {
    ...rest,
    metadata: {
      ...meta,
      finalizers: (finalizers ?? []).filter((f) => !ours.has(f)),
      annotations: Object.fromEntries(Object.entries(annotations ?? {}).filter(([key]) => !VOLHOOK_ANNOTATIONS.has(key))),
    },
  };
}

/**
 * The claim status fields volhook writes as external-resizer (`capacity` of a Block volume
 * too, but the kubelet writes it for a filesystem, so it stays news).
 */
const VOLHOOK_CLAIM_STATUS: readonly string[] = [
  'allocatedResources',
  'allocatedResourceStatuses',
  'conditions',
  'modifyVolumeStatus',
  'currentVolumeAttributesClassName',
];

/** What of a claim is news: all but volhook's protection finalizer and the status fields volhook writes. */
export function claimNews(pvc: k8s.V1PersistentVolumeClaim, ownership: Pick<Ownership, 'driver'>): unknown {
  const news = withoutVolhookWrites(pvc, ownership) as { status?: Record<string, unknown> };
  if (!news.status) return news;
  return { ...news, status: Object.fromEntries(Object.entries(news.status).filter(([field]) => !VOLHOOK_CLAIM_STATUS.includes(field))) };
}

/** What of a PV is news: all but the provisioner and attacher finalizers. */
export function volumeNews(pv: k8s.V1PersistentVolume, ownership: Pick<Ownership, 'driver'>): unknown {
  return withoutVolhookWrites(pv, ownership);
}

/** What of a VolumeAttachment is news: all but its status, the attacher finalizer and node-id. */
export function attachmentNews(va: k8s.V1VolumeAttachment, ownership: Pick<Ownership, 'driver'>): unknown {
  return withoutVolhookWrites(va, ownership, { status: 'drop' });
}

/** Second-precision times as a list's `Date`s serialize them (`.000Z`), as the API writes them. */
const WHOLE_SECOND = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.000Z$/;

/** A time as the API server writes it: a whole-second `….000Z` as `…Z`; any other string as it is. */
export function asApiServerTime(value: string): string {
  return value.replace(WHOLE_SECOND, '$1Z');
}

/**
 * A short, stable digest of a JSON value — the first 48 bits of its SHA-1, as a number: what
 * `ChangeFilter` keeps per object (a string would take three times the heap). Keys sorted, so
 * that an object from a list (client-node's model classes, `Date`s) and the same object from a
 * watch (plain JSON) agree.
 */
export function fingerprint(value: unknown): number {
  return createHash('sha1').update(canonicalJson(value)).digest().readUIntBE(0, 6);
}

function canonicalJson(value: unknown): string {
  const json = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'string') return asApiServerTime(v);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
  return json ?? '';
}

/**
 * Remembers, per object, the fingerprint of its news part (a digest, not the object: the
 * caches hold the objects already).
 */
export class ChangeFilter<T extends k8s.KubernetesObject> {
  /** By namespace ('' for cluster-scoped), then name (the cached object's own string). */
  readonly #seen = new Map<string, Map<string, number>>();

  constructor(private readonly news: (object: T) => unknown) {}

  /** Whether the event is worth a look: any add or delete, an update whose news part changed. */
  isNews(type: EventType, object: T): boolean {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    let byName = this.#seen.get(namespace);
    if (type === 'delete') {
      byName?.delete(name);
      if (byName?.size === 0) this.#seen.delete(namespace);
      return true;
    }
    const print = fingerprint(this.news(object));
    if (!byName) this.#seen.set(namespace, (byName = new Map()));
    const before = byName.get(name);
    byName.set(name, print);
    return type === 'add' || before !== print;
  }
}

/**
 * What of a VolumeSnapshotContent is news: all but what the sidecar's part writes — its whole
 * `status` and the being-created annotation (each write of which the backend answered with the
 * requeue it needs).
 */
export function snapshotContentNews(content: k8s.KubernetesObject, ownership: Pick<Ownership, 'driver'>): unknown {
  const news = withoutVolhookWrites(content, ownership, { status: 'drop' }) as { metadata: { annotations: Record<string, string> } };
  delete news.metadata.annotations[SnapshotAnnotations.beingCreated];
  return news;
}

/** As a snapshot content's: all but its status and volhook's own writes (the being-created mark). */
export function groupSnapshotContentNews(content: k8s.KubernetesObject, ownership: Pick<Ownership, 'driver'>): unknown {
  const news = withoutVolhookWrites(content, ownership, { status: 'drop' }) as { metadata: { annotations: Record<string, string> } };
  delete news.metadata.annotations[GroupSnapshotAnnotations.beingCreated];
  return news;
}
