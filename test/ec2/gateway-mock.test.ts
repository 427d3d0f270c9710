import { EC2Client } from '@aws-sdk/client-ec2';
import { createEc2Gateway } from '../../lib/ec2/index.js';
import { FakeEc2 } from './fake-ec2.js';
import { describeGatewayContract } from './gateway-contract.js';

describeGatewayContract('SDK gateway over aws-sdk-client-mock', async () => {
  const ec2 = new FakeEc2();
  const client = new EC2Client({ region: 'us-east-1' });
  const instanceId = ec2.addInstance('us-east-1a');
  return {
    gateway: (clusterId) => createEc2Gateway({ client, clusterId, batchWindowMs: 1 }),
    instance: { instanceId, zone: 'us-east-1a' },
    zones: ec2.zones.map((z) => ({ name: z.ZoneName!, id: z.ZoneId! })),
    close: async () => ec2.restore(),
  };
});
