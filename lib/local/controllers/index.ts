/**
 * The controllers a real cluster runs, for the local stack: the PV controller, a minimal
 * scheduler, the attach/detach controller, a simulated kubelet and the common snapshot
 * controller, each a level-triggered loop over the in-process `ObjectStore`.
 */
import type { ObjectStore } from '../kube/types.js';
import { startAttachDetachController } from './attach-detach-controller.js';
import type { RunningController } from './controller.js';
import { Informers } from './informers.js';
import { startKubelet } from './kubelet.js';
import type { ControllerOptions } from './options.js';
import { startPvController } from './pv-controller.js';
import { startScheduler } from './scheduler.js';
import { startSnapshotController } from './snapshot-controller.js';
import { startGroupSnapshotController } from './group-snapshot-controller.js';
import { writingAs } from './write.js';

/**
 * Starts all five controllers over one store, sharing one watch-fed cache per resource;
 * `stop()` stops them all and waits for the syncs in progress.
 */
export function startControllers(store: ObjectStore, options?: ControllerOptions): RunningController {
  const informers = new Informers(store);
  // Each writes under the field manager its real counterpart's User-Agent names.
  const running = [
    startPvController(writingAs(store, 'kube-controller-manager'), options, informers),
    startScheduler(writingAs(store, 'kube-scheduler'), options, informers),
    startAttachDetachController(writingAs(store, 'kube-controller-manager'), options, informers),
    startKubelet(writingAs(store, 'kubelet'), options, informers),
    startSnapshotController(writingAs(store, 'snapshot-controller'), options, informers),
    startGroupSnapshotController(writingAs(store, 'snapshot-controller'), options, informers),
  ];
  return {
    async stop() {
      await Promise.all(running.map((controller) => controller.stop()));
      informers.stop();
    },
  };
}

export { startAttachDetachController, startGroupSnapshotController, startKubelet, startPvController, startScheduler, startSnapshotController };
export { syncSnapshot } from './snapshot-sync.js';
export { syncContent } from './snapshot-content-sync.js';
export type { ContentWorld } from './snapshot-content-sync.js';
export type { SnapshotWorld } from './snapshot-lookups.js';
export type { SnapshotStep, SnapshotWrite } from './snapshot-step.js';
export * from './snapshot-objects.js';
export type { ControllerOptions, RunningController };
export { Informers } from './informers.js';
export { parseQuantity, tryParseQuantity } from './quantity.js';
export { findBestMatch, isPreBoundTo, volumeFitsNode } from './binding.js';
export type { MatchOptions } from './binding.js';
export { syncClaim, claimInUse, defaultClassName } from './claim-sync.js';
export type { ClaimSyncInput, ClaimSyncResult } from './claim-sync.js';
export { syncVolume } from './volume-sync.js';
export type { VolumeSyncInput, VolumeSyncResult } from './volume-sync.js';
export { schedulePod, needsScheduling } from './scheduling.js';
export type { SchedulingDecision, SchedulingInput } from './scheduling.js';
export { attachmentName, planNodeAttachments } from './attachments.js';
export type { AttachmentPlan, NodeAttachmentInput } from './attachments.js';
export { podStartup, awaitsStart } from './pod-startup.js';
export type { PodStartupInput } from './pod-startup.js';
export { matchesAllowedTopologies, matchesLabelSelector, matchesNodeSelectorTerms } from './selectors.js';
export type { EventSpec } from './events.js';
export type {
  Node,
  NodeInfo,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
  VolumeAttachment,
} from './objects.js';
