import { FAKE_ZONES, FakeGateway } from '../reconcile/fake-gateway.js';
import { describeGatewayContract } from './gateway-contract.js';

/** The reconcilers' fake holds to the contract the real gateway is held to, so the two cannot drift apart. */
describeGatewayContract('FakeGateway of the reconciler tests', async () => {
  const ec2 = new FakeGateway('c1');
  const { instanceId, zone } = ec2.addInstance({ instanceId: 'i-0aaaaaaaaaaaaaaa1', zone: 'us-east-1a', tags: {} });
  return {
    // A later request sees EC2's transitions finished.
    gateway: (clusterId) => ec2.settle().forCluster(clusterId),
    instance: { instanceId, zone },
    zones: [...FAKE_ZONES],
  };
});
