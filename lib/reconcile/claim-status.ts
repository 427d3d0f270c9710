/**
 * A bound claim's status as external-resizer writes it (KEP-1790 for resizing, KEP-3751 for
 * VolumeAttributesClass changes), computed from where each of the two stands. Pure: the claim
 * as read plus the two phases give at most one status write, with only the fields that change,
 * so a converged claim is not written again (every write is a watch event).
 */
import type {
  PersistentVolumeClaim,
  PersistentVolumeClaimCondition,
  PersistentVolumeClaimStatusPatch,
  Write,
} from '../contract/index.js';
import { kubeTime } from './writes.js';

/** `status.allocatedResourceStatuses['storage']` values (KEP-1790). */
export const ResizeStatus = {
  controllerInProgress: 'ControllerResizeInProgress',
  controllerInfeasible: 'ControllerResizeInfeasible',
  nodePending: 'NodeResizePending',
  nodeInProgress: 'NodeResizeInProgress',
  nodeInfeasible: 'NodeResizeInfeasible',
} as const;

/** Claim condition types of resizing and of VolumeAttributesClass changes. */
export const ConditionTypes = {
  resizing: 'Resizing',
  fileSystemResizePending: 'FileSystemResizePending',
  controllerResizeError: 'ControllerResizeError',
  nodeResizeError: 'NodeResizeError',
  modifyingVolume: 'ModifyingVolume',
  modifyVolumeError: 'ModifyVolumeError',
} as const;

const RESIZE_CONDITIONS: readonly string[] = [
  ConditionTypes.resizing,
  ConditionTypes.fileSystemResizePending,
  ConditionTypes.controllerResizeError,
  ConditionTypes.nodeResizeError,
];
const MODIFY_CONDITIONS: readonly string[] = [ConditionTypes.modifyingVolume, ConditionTypes.modifyVolumeError];

/** external-resizer's message on FileSystemResizePending. */
export const FS_RESIZE_PENDING_MESSAGE = 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.';

/** Where a resize stands, as the claim's status should say. */
export type ResizePhase =
  | { kind: 'none' }
  /** Asked of EC2 (or about to be): `allocated` is the size asked for. */
  | { kind: 'inProgress'; allocated: string }
  /** Refused for now (EC2's cool-down): retried at a known time. */
  | { kind: 'waiting'; allocated: string; message: string }
  | { kind: 'infeasible'; allocated: string; message: string }
  /** The disk has grown; the node plugin grows the filesystem. */
  | { kind: 'nodePending' }
  /** Done (a Block volume): the claim's capacity is the disk's. */
  | { kind: 'finished'; capacity: string };

/** Where a VolumeAttributesClass change stands. */
export type ModifyPhase =
  | { kind: 'none' }
  /** The class does not exist (yet). */
  | { kind: 'pending' }
  | { kind: 'inProgress'; target: string }
  | { kind: 'waiting'; target: string; reason: string; message: string }
  | { kind: 'infeasible'; target: string; reason: string; message: string }
  | { kind: 'completed'; target: string }
  /** The claim went back to no class while nothing was in progress. */
  | { kind: 'rolledBack' };

/** The claim's status write for these phases, or none when the status says so already. */
export function claimStatusWrites(pvc: PersistentVolumeClaim, resize: ResizePhase, modify: ModifyPhase, now: Date): Write[] {
  const status = pvc.status ?? {};
  const time = kubeTime(now);
  const patch: PersistentVolumeClaimStatusPatch = {};
  const set: PersistentVolumeClaimCondition[] = [];
  const remove = new Set<string>();
  let statuses: Record<string, string> | null = { ...(status.allocatedResourceStatuses ?? {}) };

  const condition = (type: string, message?: string, reason?: string): PersistentVolumeClaimCondition => ({
    type,
    status: 'True',
    ...(reason !== undefined && { reason }),
    ...(message !== undefined && { message }),
    lastProbeTime: time,
    lastTransitionTime: time,
  });

  switch (resize.kind) {
    case 'none':
      break;
    case 'inProgress':
    case 'waiting':
    case 'infeasible':
      patch.allocatedResources = { ...(status.allocatedResources ?? {}), storage: resize.allocated };
      statuses.storage = resize.kind === 'infeasible' ? ResizeStatus.controllerInfeasible : ResizeStatus.controllerInProgress;
      set.push(condition(ConditionTypes.resizing));
      if (resize.kind === 'inProgress') remove.add(ConditionTypes.controllerResizeError);
      else set.push(condition(ConditionTypes.controllerResizeError, `failed to expand pvc with ${resize.message}`));
      break;
    case 'nodePending':
      statuses.storage = ResizeStatus.nodePending;
      set.push(condition(ConditionTypes.resizing), condition(ConditionTypes.fileSystemResizePending, FS_RESIZE_PENDING_MESSAGE));
      remove.add(ConditionTypes.controllerResizeError);
      break;
    case 'finished':
      patch.capacity = { ...(status.capacity ?? {}), storage: resize.capacity };
      delete statuses.storage;
      for (const type of RESIZE_CONDITIONS) remove.add(type);
      break;
  }
  if (Object.keys(statuses).length === 0) statuses = null;
  if (resize.kind !== 'none') patch.allocatedResourceStatuses = statuses;

  switch (modify.kind) {
    case 'none':
      break;
    case 'pending':
      patch.modifyVolumeStatus = { ...(status.modifyVolumeStatus ?? {}), status: 'Pending' };
      break;
    case 'inProgress':
      patch.modifyVolumeStatus = { targetVolumeAttributesClassName: modify.target, status: 'InProgress' };
      set.push(condition(ConditionTypes.modifyingVolume, `Modifying volume to "${modify.target}" is in progress.`));
      remove.add(ConditionTypes.modifyVolumeError);
      break;
    case 'waiting':
    case 'infeasible':
      patch.modifyVolumeStatus = { targetVolumeAttributesClassName: modify.target, status: modify.kind === 'waiting' ? 'InProgress' : 'Infeasible' };
      set.push(
        condition(ConditionTypes.modifyingVolume, `Modifying volume to "${modify.target}" failed. Waiting for retry.`),
        condition(ConditionTypes.modifyVolumeError, modify.message, modify.reason),
      );
      break;
    case 'completed':
      patch.modifyVolumeStatus = null;
      patch.currentVolumeAttributesClassName = modify.target;
      for (const type of MODIFY_CONDITIONS) remove.add(type);
      break;
    case 'rolledBack':
      patch.modifyVolumeStatus = null;
      remove.add(ConditionTypes.modifyingVolume);
      break;
  }
  if (set.length > 0 || remove.size > 0) patch.conditions = mergeConditions(status.conditions ?? [], set, remove);
  const changed = changedFields(status, patch);
  if (Object.keys(changed).length === 0) return [];
  const { name, namespace, uid, resourceVersion } = pvc.metadata;
  return [
    {
      op: 'patchPersistentVolumeClaimStatus',
      name,
      namespace,
      uid,
      resourceVersion: resourceVersion ?? '',
      status: changed,
    },
  ];
}

/**
 * The conditions with `set` in place of those of their types and `remove` gone. A condition
 * that says the same as before keeps its times, so a repeated phase changes nothing.
 */
function mergeConditions(
  current: readonly PersistentVolumeClaimCondition[],
  set: readonly PersistentVolumeClaimCondition[],
  remove: ReadonlySet<string>,
): PersistentVolumeClaimCondition[] {
  const byType = new Map(set.map((c) => [c.type, c]));
  const kept = current.filter((c) => !remove.has(c.type) || byType.has(c.type));
  const merged = kept.map((c) => {
    const next = byType.get(c.type);
    if (!next) return c;
    byType.delete(c.type);
    return sameCondition(c, next) ? c : next;
  });
  return [...merged, ...byType.values()];
}

function sameCondition(a: PersistentVolumeClaimCondition, b: PersistentVolumeClaimCondition): boolean {
  return a.status === b.status && (a.reason ?? '') === (b.reason ?? '') && (a.message ?? '') === (b.message ?? '');
}

/** The fields of `patch` whose value differs from the status's (null = absent). */
function changedFields(status: Record<string, unknown>, patch: PersistentVolumeClaimStatusPatch): PersistentVolumeClaimStatusPatch {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (JSON.stringify(normalise(status[field])) !== JSON.stringify(normalise(value))) out[field] = value;
  }
  return out as PersistentVolumeClaimStatusPatch;
}

function normalise(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) return value.length === 0 ? null : value;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b));
    return entries.length === 0 ? null : Object.fromEntries(entries);
  }
  return value;
}
