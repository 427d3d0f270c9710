import { createEc2Client, createEc2Gateway } from '../../lib/ec2/index.js';
import { startEc2Simulator } from '../../lib/local/ec2/index.js';
import { describeGatewayContract } from './gateway-contract.js';

describeGatewayContract('SDK gateway over the EC2 simulator', async () => {
  // 200× faster: creates take ~10 ms, attaches 5–20 ms; EC2's throttling buckets stay on.
  const zones = [
    { name: 'us-east-1a', id: 'use1-az4' },
    { name: 'us-east-1b', id: 'use1-az6' },
    { name: 'us-east-1c', id: 'use1-az1' },
  ];
  const { url, sim, close } = await startEc2Simulator({ port: 0, timeScale: 200, seed: 7, zones });
  const client = createEc2Client({
    region: 'us-east-1',
    endpoint: url,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  });
  const instance = sim.runInstance({ zone: 'us-east-1a' });
  return {
    gateway: (clusterId) => createEc2Gateway({ client, clusterId, deadline: Date.now() + 10_000 }),
    instance: { instanceId: instance.id, zone: 'us-east-1a' },
    zones,
    close: async () => {
      client.destroy();
      await close();
    },
  };
});
