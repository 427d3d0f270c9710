/**
 * What a Node tells about its EC2 instance, as the forwarder and the backend must both read
 * it: over the facts an item's `NodeInfo` carries (a Node's labels and `spec.providerID`).
 */
import { TopologyKeys } from './wellknown.js';

export interface NodeFacts {
  labels?: Record<string, string>;
  providerID?: string;
}

/**
 * The labels a zone's name is read from, in order of preference: Kubernetes' own, the EBS CSI
 * driver's, then Kubernetes' deprecated beta label.
 */
export const ZONE_LABELS: readonly string[] = [TopologyKeys.wellKnownZone, TopologyKeys.ebsZone, TopologyKeys.betaZone];

/** `aws:///<zone>/<instance-id>`, the form the AWS cloud provider writes. */
const AWS_PROVIDER_ID = /^aws:\/\/\/([^/]+)\/(i-[0-9a-zA-Z]+)$/;

/** The zone and instance of an `aws:///<zone>/<instance-id>` providerID; undefined for any other form. */
export function parseProviderID(providerID: string | undefined): { zone: string; instanceId: string } | undefined {
  const match = providerID ? AWS_PROVIDER_ID.exec(providerID) : null;
  return match ? { zone: match[1]!, instanceId: match[2]! } : undefined;
}

/**
 * The node's zone: the well-known label, else the EBS CSI driver's, else from the providerID
 * (nodes registered before their labels are written still have a zone).
 */
export function nodeZone(node: NodeFacts): string | undefined {
  const labels = node.labels ?? {};
  for (const key of ZONE_LABELS) if (labels[key]) return labels[key];
  return parseProviderID(node.providerID)?.zone;
}

/** The node's zone ID (`topology.k8s.aws/zone-id`, as EKS labels nodes), if it has one. */
export function nodeZoneId(node: NodeFacts): string | undefined {
  return node.labels?.[TopologyKeys.zoneId] || undefined;
}
