/** What a Node tells about its EC2 instance: the instance ID and the zone. */
import { TopologyKeys, type NodeInfo } from '../contract/index.js';

/** `aws:///<zone>/<instance-id>`, the form the AWS cloud provider writes. */
const AWS_PROVIDER_ID = /^aws:\/\/\/([^/]+)\/(i-[0-9a-zA-Z]+)$/;

export function parseProviderID(providerID: string | undefined): { zone: string; instanceId: string } | undefined {
  const match = providerID ? AWS_PROVIDER_ID.exec(providerID) : null;
  return match ? { zone: match[1]!, instanceId: match[2]! } : undefined;
}

/** The node's EC2 instance: the CSINode's nodeID for the driver, else from the providerID. */
export function nodeInstanceId(node: NodeInfo): string | undefined {
  return node.csiNode?.nodeID ?? parseProviderID(node.providerID)?.instanceId;
}

/** The node's zone: the well-known label, else the EBS CSI driver's, else from the providerID. */
export function nodeZone(node: NodeInfo): string | undefined {
  return (
    node.labels[TopologyKeys.wellKnownZone] ||
    node.labels[TopologyKeys.ebsZone] ||
    parseProviderID(node.providerID)?.zone
  );
}
