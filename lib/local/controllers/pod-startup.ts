/**
 * The simulated kubelet's one decision: a pod placed on a node starts once every volume it
 * mounts is there — for the driver's CSI volumes (inline ones too), once their VolumeAttachment reports
 * `attached: true`. Pure.
 */
import { attachmentName, podAttachables, podVolumesResolved } from './attachments.js';
import type { VolumeLookup } from './attachments.js';
import { isDeleting, isTerminated } from './objects.js';
import type { Pod, VolumeAttachment } from './objects.js';

/** Pods the kubelet still has to start: placed, not yet running or finished, not being deleted. */
export function awaitsStart(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return Boolean(pod.spec?.nodeName) && !isDeleting(pod) && !isTerminated(pod) && phase !== 'Running';
}

export interface PodStartupInput extends VolumeLookup {
  pod: Pod;
  /** VolumeAttachments by name. */
  attachments: ReadonlyMap<string, VolumeAttachment>;
  driver: string;
  /** RFC 3339 time for the new conditions and start time. */
  now: string;
}

/** The pod's Running status once its volumes are attached, or undefined while it must wait. */
export function podStartup(input: PodStartupInput): Pod['status'] | undefined {
  const { pod, driver, now } = input;
  const nodeName = pod.spec?.nodeName;
  if (!nodeName || !awaitsStart(pod) || !podVolumesResolved(pod, input)) return undefined;
  const attached = podAttachables(pod, input, driver).every(
    ({ handle }) => input.attachments.get(attachmentName(handle, driver, nodeName))?.status?.attached === true,
  );
  if (!attached) return undefined;
  const condition = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: now });
  return {
    ...pod.status,
    phase: 'Running',
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(condition),
    startTime: (pod.status?.startTime as string | undefined) ?? now,
    containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      image: c.image,
      imageID: '',
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: now } },
    })),
  };
}
