/**
 * The deployment's node tag key (`VOLHOOK_NODE_TAG_KEY`): the instance tag its EC2 role's policy
 * compares with each session's `volhook-nodes`. A registration naming another key is refused.
 */
import { DEFAULT_NODE_TAG_KEY } from '../contract/tags.js';
import { nodeTagProblem } from './aws.js';
import { RegistrationError, type ClusterRegistry } from './registration.js';

export function nodeTagKeyFrom(env: NodeJS.ProcessEnv): string {
  return env.VOLHOOK_NODE_TAG_KEY?.trim() || DEFAULT_NODE_TAG_KEY;
}

/** The registry, with every registration whose node tag the deployment cannot serve refused as malformed (RegistrationError). */
export function withNodeTagKey(registry: ClusterRegistry, nodeTagKey: string): ClusterRegistry {
  return {
    async get(clusterId) {
      const registration = await registry.get(clusterId);
      const problem = registration && nodeTagProblem(registration, nodeTagKey);
      if (problem) throw new RegistrationError(problem);
      return registration;
    },
  };
}
