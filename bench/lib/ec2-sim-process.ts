/**
 * The EC2 simulator in a process of its own, as a bench with many clusters needs it: in the
 * bench's process, beside the clusters' Kubernetes APIs and controllers, it answers too late
 * under load (scenario e at 5,000 volumes: ETIMEDOUT on most DescribeVolumes).
 *
 *   VOLHOOK_BENCH_EC2_OPTIONS='{"region":"us-east-1","zones":[…],"seed":1,"timeScale":20}' node --import tsx bench/lib/ec2-sim-process.ts
 *
 * Listens on 127.0.0.1, a free port; prints `READY <url>` once it does. Its counters and state
 * are read through the simulator's admin routes (`/_sim/stats`, `/_sim/reset-stats`, `/_sim/state`).
 */
import { startEc2Simulator } from '../../lib/local/ec2/index.js';
import { Ec2SimProcessOptionsSchema } from './ec2-sim-handle.js';

const raw = process.env.VOLHOOK_BENCH_EC2_OPTIONS;
if (!raw) {
  process.stderr.write('ec2-sim-process: VOLHOOK_BENCH_EC2_OPTIONS (the simulator options, JSON) is not set\n');
  process.exit(2);
}
const options = Ec2SimProcessOptionsSchema.parse(JSON.parse(raw));
const sim = await startEc2Simulator({ ...options, port: 0, host: '127.0.0.1' });
process.stdout.write(`READY ${sim.url}\n`);
process.on('SIGTERM', () => {
  void sim.close().finally(() => process.exit(0));
});
