/** What a forwarder the backend refuses says of it: on `/readyz`, in its error log line. */
import { refusalMessage, type ContractRefusal } from '../contract/index.js';

/** The refusal (both contracts, both versions, what to upgrade) and what the forwarder does about it. */
export function refusedReadiness(contract: ContractRefusal['contract']): string {
  const then =
    contract.upgrade === 'backend'
      ? 'This forwarder sends nothing more; once the backend is upgraded, restart it (kubectl rollout restart).'
      : "This forwarder sends nothing more; the forwarder's upgrade replaces it.";
  return `not ready: the backend refuses this forwarder's contract. ${refusalMessage(contract)} ${then}`;
}
