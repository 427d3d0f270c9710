/**
 * `applyWrites`: the one implementation of every write in the contract. The forwarder runs it
 * with its ServiceAccount; the backend runs it itself for `writeBack: direct` clusters.
 *
 * Each write is idempotent: a state that already holds is success (the PV exists, the
 * finalizer is there, the object is gone), so a replayed response changes nothing.
 */
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { GROUP_SNAPSHOT_API_GROUP, GROUP_SNAPSHOT_API_VERSION, SNAPSHOT_API_GROUP, SNAPSHOT_API_VERSION, type ObjectRef, type Write } from '../contract/index.js';
import type { KubeClients } from './clients.js';
import { describeError, isApiError } from './errors.js';
import { EventCorrelator, recordEvent } from './events.js';
import { escapePointerToken, finalizerPatch, type JsonPatchOp, type ObservedMeta } from './json-patch.js';
import { patchClaimStatus, patchVolume } from './resize-writes.js';

export interface ApplyWritesOptions {
  /** Event `source.component` / `reportingComponent`. Default `volhook`. */
  component?: string;
  /**
   * Where repeats of an Event are counted. Default: one per process, shared by every call —
   * also when the clients are made anew per call, as `writeBack: direct` does. Sharing it
   * across clusters is safe: the key includes the object's uid, and bumping an Event that
   * does not exist in this cluster (404) just creates it.
   */
  eventCorrelator?: EventCorrelator;
  /** Tries of a guarded patch that loses a race (409/422) before giving up. Default 5. */
  conflictRetries?: number;
}

/** A write that could not be applied; `index` is its position in the list. */
export class WriteError extends Error {
  override readonly name = 'WriteError';
  constructor(
    readonly write: Write,
    readonly index: number,
    override readonly cause: unknown,
  ) {
    super(`write #${index} ${write.op} ${describeTarget(write)} failed: ${describeError(cause)}`);
  }
}

const defaultCorrelator = new EventCorrelator();

/**
 * Applies `writes` in order; stops at the first failure and throws a `WriteError`.
 */
export async function applyWrites(clients: KubeClients, writes: readonly Write[], options: ApplyWritesOptions = {}): Promise<void> {
  const context: Context = {
    clients,
    component: options.component ?? 'volhook',
    correlator: options.eventCorrelator ?? defaultCorrelator,
    retries: options.conflictRetries ?? 5,
  };
  for (const [index, write] of writes.entries()) {
    try {
      await applyWrite(context, write);
    } catch (err) {
      throw new WriteError(write, index, err);
    }
  }
}

interface Context {
  clients: KubeClients;
  component: string;
  correlator: EventCorrelator;
  retries: number;
}

async function applyWrite(context: Context, write: Write): Promise<void> {
  const { core, storage } = context.clients;
  switch (write.op) {
    case 'createPersistentVolume':
      return ignoring(409, core.createPersistentVolume({ body: write.pv as V1PersistentVolume }));
    case 'deletePersistentVolume':
      // 404: gone already. 409: the uid precondition failed, so the PV of that name is a
      // namesake created since — it must not be touched.
      return ignoring([404, 409], core.deletePersistentVolume({ name: write.name, body: { preconditions: { uid: write.uid } } }));
    case 'addFinalizer':
    case 'removeFinalizer':
      return updateFinalizers(context, write.target, write.finalizer, write.op === 'addFinalizer' ? 'add' : 'remove');
    case 'updateVolumeAttachmentStatus':
      return updateVolumeAttachmentStatus(storage, write);
    case 'removePvcAnnotation':
      return removePvcAnnotation(context, write);
    case 'setAnnotation':
      return setAnnotation(context, write);
    case 'removeAnnotation':
      return removeAnnotation(context, write);
    case 'updateVolumeSnapshotContentStatus':
      return updateSnapshotContentStatus(context, write);
    case 'updateVolumeGroupSnapshotContentStatus':
      return updateGroupSnapshotContentStatus(context, write);
    case 'patchPersistentVolume':
      return patchVolume(context.clients, write, context.retries);
    case 'patchPersistentVolumeClaimStatus':
      return patchClaimStatus(context.clients, write);
    case 'createEvent':
      return recordEvent(core, write, { component: context.component, correlator: context.correlator });
  }
}

async function ignoring(codes: number | number[], call: Promise<unknown>): Promise<void> {
  const ignored = Array.isArray(codes) ? codes : [codes];
  try {
    await call;
  } catch (err) {
    if (!ignored.some((code) => isApiError(err, code))) throw err;
  }
}

/** Read the object's metadata (undefined when it does not exist) and JSON-patch it. */
interface ObjectAccess {
  read(): Promise<ObservedMeta & { annotations?: Record<string, string> } | undefined>;
  patch(ops: JsonPatchOp[]): Promise<unknown>;
}

function access(clients: KubeClients, ref: ObjectRef): ObjectAccess {
  const { core, storage } = clients;
  const name = ref.name;
  const readMeta = async (read: () => Promise<{ metadata?: object }>) => {
    try {
      return (await read()).metadata as (ObservedMeta & { annotations?: Record<string, string> }) | undefined;
    } catch (err) {
      if (isApiError(err, 404)) return undefined;
      throw err;
    }
  };
  switch (ref.kind) {
    case 'PersistentVolume':
      return {
        read: () => readMeta(() => core.readPersistentVolume({ name })),
        patch: (ops) => core.patchPersistentVolume({ name, body: ops }),
      };
    case 'PersistentVolumeClaim': {
      if (!ref.namespace) throw new Error(`PersistentVolumeClaim ${name}: namespace is required`);
      const namespace = ref.namespace;
      return {
        read: () => readMeta(() => core.readNamespacedPersistentVolumeClaim({ name, namespace })),
        patch: (ops) => core.patchNamespacedPersistentVolumeClaim({ name, namespace, body: ops }),
      };
    }
    case 'VolumeAttachment':
      return {
        read: () => readMeta(() => storage.readVolumeAttachment({ name })),
        patch: (ops) => storage.patchVolumeAttachment({ name, body: ops }),
      };
    case 'VolumeSnapshotContent':
      return {
        read: () => readMeta(() => clients.custom.getClusterCustomObject({ ...SNAPSHOT_CONTENTS, name }) as Promise<{ metadata?: object }>),
        patch: (ops) => clients.custom.patchClusterCustomObject({ ...SNAPSHOT_CONTENTS, name, body: ops }),
      };
    case 'VolumeGroupSnapshotContent':
      return {
        read: () => readMeta(() => clients.custom.getClusterCustomObject({ ...GROUP_SNAPSHOT_CONTENTS, name }) as Promise<{ metadata?: object }>),
        patch: (ops) => clients.custom.patchClusterCustomObject({ ...GROUP_SNAPSHOT_CONTENTS, name, body: ops }),
      };
    case 'VolumeSnapshot': {
      if (!ref.namespace) throw new Error(`VolumeSnapshot ${name}: namespace is required`);
      const namespace = ref.namespace;
      return {
        read: () => readMeta(() => clients.custom.getNamespacedCustomObject({ ...SNAPSHOTS, namespace, name }) as Promise<{ metadata?: object }>),
        patch: (ops) => clients.custom.patchNamespacedCustomObject({ ...SNAPSHOTS, namespace, name, body: ops }),
      };
    }
  }
}

const SNAPSHOT_CONTENTS = { group: SNAPSHOT_API_GROUP, version: SNAPSHOT_API_VERSION, plural: 'volumesnapshotcontents' } as const;
const SNAPSHOTS = { group: SNAPSHOT_API_GROUP, version: SNAPSHOT_API_VERSION, plural: 'volumesnapshots' } as const;
const GROUP_SNAPSHOT_CONTENTS = { group: GROUP_SNAPSHOT_API_GROUP, version: GROUP_SNAPSHOT_API_VERSION, plural: 'volumegroupsnapshotcontents' } as const;

/**
 * Read, compute a guarded JSON patch, send it; on 409/422 (someone else wrote in between, so
 * a `test` failed) read again and recompute. `compute` returns undefined when nothing is left
 * to do. The object being gone, or being a namesake (uid differs), is nothing to do.
 */
async function guardedPatch(
  context: Context,
  target: ObjectRef,
  compute: (meta: ObservedMeta & { annotations?: Record<string, string> }) => JsonPatchOp[] | undefined,
): Promise<void> {
  const object = access(context.clients, target);
  for (let attempt = 1; ; attempt++) {
    const meta = await object.read();
    if (!meta) return;
    if (target.uid && meta.uid !== target.uid) return;
    const ops = compute(meta);
    if (!ops) return;
    try {
      await object.patch(ops);
      return;
    } catch (err) {
      if (isApiError(err, 404)) return;
      const lostRace = isApiError(err, 409) || isApiError(err, 422);
      if (!lostRace || attempt >= context.retries) throw err;
    }
  }
}

function updateFinalizers(context: Context, target: ObjectRef, finalizer: string, action: 'add' | 'remove'): Promise<void> {
  return guardedPatch(context, target, (meta) => finalizerPatch(meta, finalizer, action));
}

function removePvcAnnotation(context: Context, write: Extract<Write, { op: 'removePvcAnnotation' }>): Promise<void> {
  const target: ObjectRef = { kind: 'PersistentVolumeClaim', name: write.name, namespace: write.namespace, uid: write.uid };
  return guardedPatch(context, target, (meta) => {
    if (!meta.annotations || !(write.annotation in meta.annotations)) return undefined;
    return [
      // The uid test keeps a namesake PVC, created since the read, untouched.
      ...(meta.uid ? [{ op: 'test' as const, path: '/metadata/uid', value: meta.uid }] : []),
      { op: 'remove' as const, path: `/metadata/annotations/${escapePointerToken(write.annotation)}` },
    ];
  });
}

function setAnnotation(context: Context, write: Extract<Write, { op: 'setAnnotation' }>): Promise<void> {
  return guardedPatch(context, write.target, (meta) => {
    if (meta.annotations?.[write.key] === write.value) return undefined;
    const uidTest = { op: 'test' as const, path: '/metadata/uid', value: write.target.uid };
    if (!meta.annotations) {
      // No map to add into: guard on the whole object's version, as finalizer patches do.
      return [
        uidTest,
        { op: 'test' as const, path: '/metadata/resourceVersion', value: meta.resourceVersion ?? '' },
        { op: 'add' as const, path: '/metadata/annotations', value: { [write.key]: write.value } },
      ];
    }
    return [uidTest, { op: 'add' as const, path: `/metadata/annotations/${escapePointerToken(write.key)}`, value: write.value }];
  });
}

function removeAnnotation(context: Context, write: Extract<Write, { op: 'removeAnnotation' }>): Promise<void> {
  return guardedPatch(context, write.target, (meta) => {
    if (!meta.annotations || !(write.key in meta.annotations)) return undefined;
    return [
      { op: 'test' as const, path: '/metadata/uid', value: write.target.uid },
      { op: 'remove' as const, path: `/metadata/annotations/${escapePointerToken(write.key)}` },
    ];
  });
}

/**
 * Merge patch of the content's status subresource. A snapshot handle is never replaced by
 * another: the write is skipped when the content already records a different snapshot (two
 * requests that raced both answer, and the first recorded stays the content's). The read and
 * the patch are tied by resourceVersion, so a handle written in between fails the patch (409),
 * and the check is made again.
 */
function updateSnapshotContentStatus(context: Context, write: Extract<Write, { op: 'updateVolumeSnapshotContentStatus' }>): Promise<void> {
  return patchContentStatus(context, SNAPSHOT_CONTENTS, write.name, write.uid, write.status, (status) => status?.snapshotHandle, write.status.snapshotHandle);
}

/** As a VolumeSnapshotContent's: a group content's handle, once recorded, is never replaced by another. */
function updateGroupSnapshotContentStatus(context: Context, write: Extract<Write, { op: 'updateVolumeGroupSnapshotContentStatus' }>): Promise<void> {
  return patchContentStatus(context, GROUP_SNAPSHOT_CONTENTS, write.name, write.uid, write.status, (status) => status?.volumeGroupSnapshotHandle, write.status.volumeGroupSnapshotHandle);
}

type ContentStatus = { snapshotHandle?: string | null; volumeGroupSnapshotHandle?: string | null } | undefined;

async function patchContentStatus(
  context: Context,
  resource: { group: string; version: string; plural: string },
  name: string,
  uid: string,
  status: object,
  recordedHandle: (status: ContentStatus) => string | null | undefined,
  handle: string | null | undefined,
): Promise<void> {
  const { custom } = context.clients;
  for (let attempt = 1; ; attempt++) {
    let current: { metadata?: { uid?: string; resourceVersion?: string }; status?: ContentStatus };
    try {
      current = (await custom.getClusterCustomObject({ ...resource, name })) as typeof current;
    } catch (err) {
      if (isApiError(err, 404)) return;
      throw err;
    }
    if (current.metadata?.uid !== uid) return; // a namesake: not ours to update
    const recorded = recordedHandle(current.status);
    if (handle && recorded && recorded !== handle) return;
    try {
      // A merge patch (KubeClients).
      await custom.patchClusterCustomObjectStatus({
        ...resource,
        name,
        body: { metadata: { resourceVersion: current.metadata?.resourceVersion }, status },
      });
      return;
    } catch (err) {
      if (isApiError(err, 404)) return;
      if (!isApiError(err, 409) || attempt >= context.retries) throw err;
    }
  }
}

async function updateVolumeAttachmentStatus(
  storage: KubeClients['storage'],
  write: Extract<Write, { op: 'updateVolumeAttachmentStatus' }>,
): Promise<void> {
  try {
    if (write.uid) {
      const current = await storage.readVolumeAttachment({ name: write.name });
      if (current.metadata?.uid !== write.uid) return; // a namesake: not ours to update
    }
    // Merge patch of the status subresource: nulls (attachError: null) clear a field.
    await storage.patchVolumeAttachmentStatus({ name: write.name, body: { status: write.status } });
  } catch (err) {
    if (isApiError(err, 404)) return; // the VolumeAttachment is gone: nothing left to report on
    throw err;
  }
}

function describeTarget(write: Write): string {
  switch (write.op) {
    case 'createPersistentVolume':
      return `PersistentVolume/${write.pv.metadata.name}`;
    case 'deletePersistentVolume':
      return `PersistentVolume/${write.name}`;
    case 'addFinalizer':
    case 'removeFinalizer':
      return `${write.target.kind}/${write.target.namespace ? `${write.target.namespace}/` : ''}${write.target.name} ${write.finalizer}`;
    case 'updateVolumeAttachmentStatus':
      return `VolumeAttachment/${write.name}`;
    case 'removePvcAnnotation':
      return `PersistentVolumeClaim/${write.namespace}/${write.name} ${write.annotation}`;
    case 'setAnnotation':
    case 'removeAnnotation':
      return `${write.target.kind}/${write.target.name} ${write.key}`;
    case 'updateVolumeSnapshotContentStatus':
      return `VolumeSnapshotContent/${write.name}`;
    case 'updateVolumeGroupSnapshotContentStatus':
      return `VolumeGroupSnapshotContent/${write.name}`;
    case 'patchPersistentVolume':
      return `PersistentVolume/${write.name}`;
    case 'patchPersistentVolumeClaimStatus':
      return `PersistentVolumeClaim/${write.namespace}/${write.name} status`;
    case 'createEvent':
      return `Event ${write.reason} on ${write.involvedObject.kind}/${write.involvedObject.name}`;
  }
}
