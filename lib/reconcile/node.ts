/** What a Node tells about its EC2 instance; its zone is the contract's `nodeZone`. */
import { parseProviderID, type NodeInfo } from '../contract/index.js';

/** The node's EC2 instance: the CSINode's nodeID for the driver, else from the providerID. */
export function nodeInstanceId(node: NodeInfo): string | undefined {
  return node.csiNode?.nodeID ?? parseProviderID(node.providerID)?.instanceId;
}
