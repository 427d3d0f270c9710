/**
 * What the node agent (node-agent.ts) decides that the simulator's kubelet (pod-startup.ts,
 * node-expansion.ts, reused as they are) does not: when a deleted pod's grace has ended, and
 * which volumes the node reports in use. Pure.
 */
import { podAttachables, type VolumeLookup } from '../controllers/attachments.js';
import { isTerminated, type Pod } from '../controllers/objects.js';

/** The name kubelet and the attach/detach controller give a CSI volume in a Node's status. */
export function uniqueVolumeName(driver: string, handle: string): string {
  return `kubernetes.io/csi/${driver}^${handle}`;
}

/**
 * A deleted pod's grace has ended: its `deletionTimestamp` (the delete's time plus the grace
 * period) is not in the future. Kubelet then has stopped its containers and unmounted its
 * volumes, and removes it.
 */
export function graceEnded(pod: Pod, now: Date): boolean {
  const at = pod.metadata.deletionTimestamp;
  return typeof at === 'string' && Date.parse(at) <= now.getTime();
}

/**
 * `status.volumesInUse`: the driver's volumes of every pod on the node that still holds them
 * (its claims' PVs and its inline, migrated in-tree volumes) —
 * not finished, and not deleted past its grace (those are unmounted). Sorted, each once. The
 * attach/detach controller detaches none of these.
 */
export function volumesInUse(pods: readonly Pod[], lookup: VolumeLookup, driver: string, now: Date): string[] {
  const names = new Set<string>();
  for (const pod of pods) {
    if (isTerminated(pod) || graceEnded(pod, now)) continue;
    for (const { handle } of podAttachables(pod, lookup, driver)) names.add(uniqueVolumeName(driver, handle));
  }
  return [...names].sort();
}
