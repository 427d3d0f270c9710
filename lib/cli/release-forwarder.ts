/**
 * Whether the cluster's forwarder may still be running, judged from live evidence only and
 * dated by the API server's clock, never the local one: a forwarder that runs while release
 * removes volhook's marks puts them back (and, on the backend's answers, acts on the disks).
 *
 * Every forwarder of the cluster is judged, wherever it is: the chart names its Deployment,
 * ConfigMap and Lease after the Helm release, in the release's namespace (`helm install vh … -n
 * storage` → `storage/vh`), so release-kube.ts finds them by the chart's label in every
 * namespace and by any ConfigMap naming a cluster id, besides `volhook-system/volhook-forwarder`
 * (the manifests' and the default release's).
 *
 * - Its Lease (leader election; the ConfigMap's `VOLHOOK_LEASE_NAME`, else its place's name): busy while the API server's `Date` is before its last write plus its
 *   `leaseDurationSeconds`. The last write is the latest of `renewTime`/`acquireTime` (the
 *   holder's clock) and the `managedFields` times (the API server's own), so a holder whose
 *   clock runs behind still counts as alive. A Lease still held (not released on shutdown) may
 *   hide a forwarder cut off from the API server with requests in flight, and a `writeBack:
 *   direct` cluster has the backend apply the writes of the last requests itself: both add
 *   {@link IN_FLIGHT_SECONDS}. The `Date` header has whole seconds, earlier than the server's
 *   true time: judging by it errs towards "busy".
 * - Its Deployment (if the API serves apps/v1) with replicas, or its pods not yet finished:
 *   a forwarder that is, or will be, running, whatever its Lease says.
 * - Its ConfigMap naming another cluster id: the kubeconfig names the wrong cluster.
 * No Lease at all (a forwarder without leader election leaves none) is no evidence either way;
 * the report says so.
 */
import { FORWARDER_CHART } from './install-line.js';
import type { ForwarderEvidence, HelmRelease } from './release-view.js';

/** A request in flight when the forwarder stopped: its 25 s timeout, the function's 28 s. */
export const IN_FLIGHT_SECONDS = 30;

export const FORWARDER_NAME = 'volhook-forwarder';
export const FORWARDER_NAMESPACE = FORWARDER_CHART.namespace;
export const FORWARDER_LABEL = `app.kubernetes.io/name=${FORWARDER_NAME}`;

export interface ForwarderVerdict {
  /** Why --apply must not go on: a forwarder may run, or this is not the cluster named. */
  refusals: string[];
  /** What was seen, a line each. */
  seen: string[];
  /** The commands that remove what is left of the forwarder. */
  uninstall: string[];
}

/**
 * Pure: the verdict on `evidence` for cluster `clusterId`, registered with `writeBack` — of one
 * forwarder, or of every one found (each where it is: the chart names its objects after the
 * Helm release, in the release's namespace), their refusals and lines together.
 */
export function judgeForwarder(evidence: ForwarderEvidence | readonly ForwarderEvidence[], clusterId: string, writeBack: 'forwarder' | 'direct' = 'forwarder'): ForwarderVerdict {
  const all: readonly ForwarderEvidence[] = 'pods' in evidence ? [evidence] : evidence.length > 0 ? evidence : [{ deployment: { kind: 'absent' }, pods: [] }];
  const verdicts = all.map((one) => judgeOne(one, clusterId, writeBack));
  return {
    refusals: verdicts.flatMap((v) => v.refusals),
    seen: verdicts.flatMap((v) => v.seen),
    uninstall: [...new Set(verdicts.flatMap((v) => v.uninstall))],
  };
}

function judgeOne(evidence: ForwarderEvidence, clusterId: string, writeBack: 'forwarder' | 'direct'): ForwarderVerdict {
  const refusals: string[] = [];
  const seen: string[] = [];
  const namespace = evidence.where?.namespace ?? FORWARDER_NAMESPACE;
  const where = `${namespace}/${evidence.where?.name ?? FORWARDER_NAME}`;
  const leaseWhere = `${namespace}/${evidence.leaseName ?? evidence.where?.name ?? FORWARDER_NAME}`;

  const { lease, serverDate } = evidence;
  if (!lease) {
    seen.push(`Lease ${leaseWhere}: none (a forwarder without leader election leaves none: make sure none runs elsewhere)`);
  } else {
    const held = lease.holderIdentity !== '';
    const who = held ? `held by ${lease.holderIdentity}` : 'released by its last holder';
    const last = latest(lease.times);
    const now = serverDate === undefined ? NaN : Date.parse(serverDate);
    if (last === undefined || Number.isNaN(now)) {
      const why = last === undefined ? 'it records no time' : "the API server's answer had no Date";
      if (held) refusals.push(`Lease ${leaseWhere} is ${who} and cannot be dated (${why}): a forwarder may be running`);
      seen.push(`Lease ${leaseWhere}: ${who}, not dated (${why})`);
    } else {
      const grace = held || writeBack === 'direct' ? IN_FLIGHT_SECONDS : 0;
      const busyUntil = last + (lease.leaseDurationSeconds + grace) * 1000;
      const ago = `last written ${written(now - last)}`;
      if (now < busyUntil) {
        const extra = grace ? ` + ${grace} s for requests in flight${writeBack === 'direct' ? ' (writeBack: direct)' : ''}` : '';
        refusals.push(`Lease ${leaseWhere} is ${who}, ${ago} (lease ${lease.leaseDurationSeconds} s${extra}): a forwarder may be running; try again after ${new Date(busyUntil).toISOString()} by the API server's clock`);
        seen.push(`Lease ${leaseWhere}: ${who}, ${ago}: BUSY`);
      } else {
        seen.push(`Lease ${leaseWhere}: ${who}, ${ago} (lease ${lease.leaseDurationSeconds} s): not renewed since`);
      }
    }
  }

  const { deployment } = evidence;
  if (deployment.kind === 'not-served') seen.push(`Deployment ${where}: apps/v1 is not served by this API server`);
  else if (deployment.kind === 'absent') seen.push(`Deployment ${where}: none`);
  else {
    seen.push(`Deployment ${where}: ${deployment.replicas} replica(s) wanted, ${deployment.readyReplicas} ready${deployment.helm ? ` (Helm release ${deployment.helm.name})` : ''}`);
    if (deployment.replicas > 0) refusals.push(`Deployment ${where} wants ${deployment.replicas} replica(s): uninstall the forwarder first`);
  }

  if (evidence.pods.length === 0) seen.push(`pods (${FORWARDER_LABEL}) in ${namespace}: none running`);
  for (const pod of evidence.pods) {
    seen.push(`pod ${namespace}/${pod.name}: ${pod.phase}`);
    refusals.push(`pod ${namespace}/${pod.name} of the forwarder is ${pod.phase}: uninstall the forwarder first`);
  }

  const configured = evidence.configMap?.clusterId;
  if (evidence.configMap) seen.push(`ConfigMap ${where}: VOLHOOK_CLUSTER_ID=${configured ?? '(unset)'}`);
  if (configured !== undefined && configured !== clusterId) {
    refusals.push(`ConfigMap ${where} configures the forwarder for cluster "${configured}", not "${clusterId}": is this the right kubeconfig context?`);
  }

  return { refusals, seen, uninstall: uninstallSteps(evidence) };
}

/**
 * Helm's release when an object names one; the manifests' objects by label otherwise (the
 * CSIDriver `ebs.csi.aws.com` they may have made stays: the node plugin needs it). The Lease
 * and the Secret `cluster add` printed belong to no release.
 */
function uninstallSteps(evidence: ForwarderEvidence): string[] {
  const helm: HelmRelease | undefined = (evidence.deployment.kind === 'present' ? evidence.deployment.helm : undefined) ?? evidence.configMap?.helm;
  const installed = evidence.deployment.kind === 'present' || evidence.configMap !== undefined;
  const namespace = evidence.where?.namespace ?? FORWARDER_NAMESPACE;
  const name = evidence.where?.name ?? FORWARDER_NAME;
  const steps: string[] = [];
  if (helm) steps.push(`helm uninstall ${helm.name} -n ${helm.namespace}`);
  else if (installed) {
    steps.push(
      `kubectl -n ${namespace} delete deployment,poddisruptionbudget,configmap,serviceaccount,role,rolebinding -l ${FORWARDER_LABEL}`,
      `kubectl delete clusterrole,clusterrolebinding -l ${FORWARDER_LABEL}`,
    );
  } else steps.push(`helm uninstall ${FORWARDER_CHART.release} -n ${namespace} (if installed with the chart; nothing of it is seen here)`);
  steps.push(`kubectl -n ${namespace} delete lease/${evidence.leaseName ?? name} secret/${name} --ignore-not-found (or the namespace, once nothing else is in it)`);
  return steps;
}

function latest(times: readonly string[]): number | undefined {
  const parsed = times.map((t) => Date.parse(t)).filter((t) => !Number.isNaN(t));
  return parsed.length ? Math.max(...parsed) : undefined;
}

/**
 * `ms` before the API server's time, in seconds. The `Date` header drops the fraction of its
 * second, so a write up to a second "after" it is one made within that second.
 */
function written(ms: number): string {
  if (ms > -1000) return `${Math.max(0, Math.floor(ms / 1000))} s before the API server's time`;
  return `${Math.ceil(-ms / 1000)} s after the API server's time (its writer's clock is ahead)`;
}
