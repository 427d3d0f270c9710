/**
 * The versions each cluster's forwarders run, as the backend sees them: what a backend rollback
 * is decided on (docs/upgrade.md). Hung on the app's `onContract` hook.
 *
 * - Every log line of a served request carries `contract` and `forwarderVersion` (absent for
 *   contract 1: 0.1.0's forwarder sends none), beside its `clusterId`.
 * - Each served request counts once in `ContractRequests<n>` (dimensions `service`, `clusterId`),
 *   so "which clusters still speak contract 1" is one metric per contract; only contracts served
 *   are counted, a bounded set.
 * - A refused one leaves a WARN line naming both versions and a count in `ContractRefused`; its
 *   cluster id is the path's, unverified (a contract not served cannot be verified).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { ContractSeen } from '../app/app.js';
import { countPerCluster } from './reconcile-results.js';

export const CONTRACT_METRICS = {
  /** `ContractRequests1`, `ContractRequests2`, …: served requests per contract. */
  requests: (contract: number) => `ContractRequests${contract}`,
  refused: 'ContractRefused',
} as const;

export const CONTRACT_REFUSED_MESSAGE = 'contract refused';

export function recordForwarderContracts(logger: Logger, metrics: Metrics) {
  return (clusterId: string, seen: ContractSeen): void => {
    const fields = { contract: seen.contract, ...(seen.forwarderVersion !== undefined && { forwarderVersion: seen.forwarderVersion }) };
    if (seen.served) {
      // Until the end of the invocation (withObservability resets them): every reconciled line.
      logger.appendKeys(fields);
    } else {
      logger.warn(CONTRACT_REFUSED_MESSAGE, { clusterId, ...fields });
    }
    countPerCluster(metrics, clusterId, seen.served ? CONTRACT_METRICS.requests(seen.contract) : CONTRACT_METRICS.refused);
  };
}
