/**
 * A forwarder process of the fleet bench: bin/forwarder.ts's configuration from the environment,
 * with its send cadence's grid from `VOLHOOK_BENCH_CADENCE_MS`. The bench shrinks the grid with
 * the simulator's time scale, as the simulator shrinks EC2's latencies: the grid is set against
 * them (DEFAULT_CADENCE, lib/forwarder/queue.ts), and unscaled it would weigh twice as much
 * against a floor that is halved.
 */
import { configFromEnv, createJsonLogger, startForwarder } from '../../lib/forwarder/index.js';
import { kubeAccessFor } from '../../lib/forwarder/kube/source.js';

const cadenceMs = Number(process.env.VOLHOOK_BENCH_CADENCE_MS);
if (!Number.isInteger(cadenceMs) || cadenceMs < 0) throw new Error(`VOLHOOK_BENCH_CADENCE_MS must be a whole number of milliseconds, got ${process.env.VOLHOOK_BENCH_CADENCE_MS}`);
const config = { ...configFromEnv(process.env), cadenceMs };
const logger = createJsonLogger({ level: config.logLevel });
const forwarder = await startForwarder(config, { kubeAccess: await kubeAccessFor(config.kubeServer), logger });
const exit = () => void forwarder.stop().then(() => process.exit(0), () => process.exit(1));
process.once('SIGTERM', exit);
process.once('SIGINT', exit);
