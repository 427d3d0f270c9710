/**
 * The scheduler's decision for one pod, reduced to what storage needs: which nodes can
 * reach the pod's volumes, which one to take, and the two-step dance with
 * WaitForFirstConsumer claims (name the node on the claim, wait until provisioning or the
 * PV controller bound it, then place the pod). Pure.
 */
import { findBestMatch, volumeFitsNode } from './binding.js';
import { ANN, annotation, claimClass, isDeleting, isTerminated, nodeInfo, podClaimNames } from './objects.js';
import type { Node, NodeInfo, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass } from './objects.js';
import { matchesAllowedTopologies, matchesNodeSelectorTerms } from './selectors.js';

export interface SchedulingInput {
  pod: Pod;
  /** The pod's claims by name; `undefined` when the claim does not exist. */
  claims: ReadonlyMap<string, PersistentVolumeClaim | undefined>;
  /** PVs: at least those the pod's claims name, and every PV while a claim is unbound. */
  volumes: readonly PersistentVolume[];
  classes: readonly StorageClass[];
  nodes: readonly Node[];
  /**
   * Unfinished pods placed or assumed on each node (assumed: one of their claims names the
   * node in `selected-node`), the pod being scheduled excluded; it goes where there are fewest.
   */
  podsPerNode: ReadonlyMap<string, number>;
  /** Volumes of the pods counted in `podsPerNode`, per node. */
  volumesPerNode?: ReadonlyMap<string, number>;
  /** CSINode `allocatable.count` of the driver, per node: the node's attachment limit. */
  volumeLimits?: ReadonlyMap<string, number>;
}

export type SchedulingDecision =
  /** Nothing to do until something changes (a claim appears, provisioning finishes…). */
  | { action: 'wait'; reason: string }
  /** No node fits: report it (Warning FailedScheduling) and wait. */
  | { action: 'unschedulable'; message: string }
  /** Name `node` in `volume.kubernetes.io/selected-node` on these WaitForFirstConsumer claims. */
  | { action: 'selectNode'; node: string; claims: string[] }
  /** Every claim is bound and fits `node`: set the pod's `spec.nodeName`. */
  | { action: 'bind'; node: string };

/** Pods this scheduler places: pending, unassigned, not being deleted, and asking for the default scheduler. */
export function needsScheduling(pod: Pod): boolean {
  const scheduler = pod.spec?.schedulerName;
  return (
    !pod.spec?.nodeName &&
    !isDeleting(pod) &&
    !isTerminated(pod) &&
    (scheduler === undefined || scheduler === '' || scheduler === 'default-scheduler')
  );
}

export function schedulePod(input: SchedulingInput): SchedulingDecision {
  const bound: PersistentVolume[] = [];
  let binding = 0;
  const delayed: Array<{ claim: PersistentVolumeClaim; storageClass: StorageClass }> = [];
  for (const name of podClaimNames(input.pod)) {
    const claim = input.claims.get(name);
    if (!claim) return wait(`persistentvolumeclaim "${name}" not found`);
    if (isDeleting(claim)) return wait(`persistentvolumeclaim "${name}" is being deleted`);
    const volumeName = claim.spec.volumeName;
    if (volumeName) {
      const volume = input.volumes.find((v) => v.metadata.name === volumeName);
      if (!volume) return wait(`persistentvolume "${volumeName}" not found`);
      bound.push(volume);
      if (claim.status?.phase !== 'Bound') binding += 1;
      continue;
    }
    const storageClass = input.classes.find((c) => c.metadata.name === claimClass(claim));
    if (storageClass?.volumeBindingMode !== 'WaitForFirstConsumer') {
      return wait('pod has unbound immediate PersistentVolumeClaims');
    }
    delayed.push({ claim, storageClass });
  }

  const reasons = new Map<string, number>();
  const feasible: NodeInfo[] = [];
  for (const node of input.nodes) {
    const reason = whyNot(node, input, bound, delayed);
    if (reason) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    else feasible.push(nodeInfo(node));
  }
  if (feasible.length === 0) {
    const details = [...reasons].sort(([a], [b]) => a.localeCompare(b)).map(([r, n]) => `${n} ${r}`);
    const message = `0/${input.nodes.length} nodes are available${details.length ? `: ${details.join(', ')}` : ''}.`;
    return { action: 'unschedulable', message };
  }

  const node = chooseNode(feasible, input);
  const toAnnotate = delayed.filter((d) => annotation(d.claim, ANN.selectedNode) !== node).map((d) => d.claim.metadata.name);
  if (toAnnotate.length > 0) return { action: 'selectNode', node, claims: toAnnotate };
  if (delayed.length + binding > 0) return wait(`waiting for ${delayed.length + binding} claim(s) to be bound for node "${node}"`);
  return { action: 'bind', node };
}

/**
 * A node already named on one of the pod's claims keeps its place while it still fits, so
 * the pod follows the volumes provisioned for it; otherwise the node with the fewest pods,
 * ties by name.
 */
function chooseNode(feasible: readonly NodeInfo[], input: SchedulingInput): string {
  const names = new Set(feasible.map((n) => n.name));
  for (const claimName of podClaimNames(input.pod)) {
    const selected = input.claims.get(claimName)?.metadata.annotations?.[ANN.selectedNode];
    if (selected && names.has(selected)) return selected;
  }
  const load = (n: NodeInfo) => input.podsPerNode.get(n.name) ?? 0;
  const sorted = [...feasible].sort((a, b) => load(a) - load(b) || a.name.localeCompare(b.name));
  return sorted[0]!.name;
}

/** The first filter a node fails, worded like the scheduler's own reasons, or undefined. */
function whyNot(
  node: Node,
  input: SchedulingInput,
  bound: readonly PersistentVolume[],
  delayed: ReadonlyArray<{ claim: PersistentVolumeClaim; storageClass: StorageClass }>,
): string | undefined {
  const info = nodeInfo(node);
  const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  if (!ready) return 'node(s) were not ready';
  if (node.spec?.unschedulable) return 'node(s) were unschedulable';
  if (!podFitsNode(input.pod, info)) return "node(s) didn't match Pod's node affinity/selector";
  const limit = input.volumeLimits?.get(node.metadata.name);
  const used = input.volumesPerNode?.get(node.metadata.name) ?? 0;
  if (limit !== undefined && used + podClaimNames(input.pod).length > limit) return 'node(s) exceed max volume count';
  if (!bound.every((v) => volumeFitsNode(v, info))) return 'node(s) had volume node affinity conflict';
  const reachable = delayed.every(
    ({ claim, storageClass }) =>
      findBestMatch(claim, input.volumes, { node: info }) !== undefined || canProvision(storageClass, info),
  );
  if (!reachable) return "node(s) didn't find available persistent volumes to bind";
  return undefined;
}

/** A provisioner can create a volume for this node: it exists, and the node is inside allowedTopologies. */
function canProvision(storageClass: StorageClass, node: NodeInfo): boolean {
  const provisioner = storageClass.provisioner;
  if (!provisioner || provisioner === 'kubernetes.io/no-provisioner') return false;
  return matchesAllowedTopologies(storageClass.allowedTopologies, node.labels);
}

function podFitsNode(pod: Pod, node: NodeInfo): boolean {
  for (const [key, value] of Object.entries(pod.spec?.nodeSelector ?? {})) {
    if (node.labels[key] !== value) return false;
  }
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return !required || matchesNodeSelectorTerms(required.nodeSelectorTerms ?? [], node);
}

function wait(reason: string): SchedulingDecision {
  return { action: 'wait', reason };
}
