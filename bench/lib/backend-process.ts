/**
 * One backend process of the scale-out bench, as one Lambda instance runs it: its own EC2
 * client, the clusters of a registry file, and the stores the environment names, as deployed
 * (`VOLHOOK_BUDGET_TABLE`, `VOLHOOK_REPLAY_TABLE`, `VOLHOOK_REPORTS_TABLE`: DynamoDB, shared by
 * every process; each unset: in this process's memory). `VOLHOOK_BENCH_EC2_TIME_SCALE`: the
 * simulator's time scale, by which the backend's waits on EC2's own durations shrink.
 * `VOLHOOK_BENCH_REPORT_TIME_SCALE`: how much faster than real time the forwarders resync, by
 * which the report interval the backend asks for shrinks (lib/reconcile/context.ts `reportTimeScale`).
 *
 *   VOLHOOK_REGISTRY_FILE=… VOLHOOK_BENCH_EC2_ENDPOINT=http://127.0.0.1:… node --import tsx bench/lib/backend-process.ts
 *
 * Listens on 127.0.0.1, a free port; prints `READY <url>` once it does. `GET /_bench/stats`
 * answers its EC2 calls and tokens per action since it started.
 */
import { Hono } from 'hono';
import { createBackendApp } from '../../lib/app/index.js';
import { budgetFromEnvironment } from '../../lib/budget/index.js';
import { Ec2CallStats } from '../../lib/ec2/index.js';
import { startBackendServer } from '../../lib/local/stack/backend-server.js';
import { registryFromEnvironment } from '../../lib/registry/index.js';
import { replayStoreFromEnvironment } from '../../lib/replay/from-environment.js';
import { reportStoreFromEnvironment } from '../../lib/reports/from-environment.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const endpoint = process.env.VOLHOOK_BENCH_EC2_ENDPOINT;
if (!endpoint) {
  process.stderr.write('backend-process: VOLHOOK_BENCH_EC2_ENDPOINT (the EC2 simulator URL) is not set\n');
  process.exit(2);
}

const totals = new Ec2CallStats();
const backend = createBackendApp({
  registry: registryFromEnvironment(process.env),
  budget: budgetFromEnvironment(process.env),
  replay: replayStoreFromEnvironment(process.env),
  reports: reportStoreFromEnvironment(process.env),
  account: process.env.VOLHOOK_AWS_ACCOUNT,
  ec2Endpoint: endpoint,
  ec2Credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  ...(process.env.VOLHOOK_BENCH_EC2_TIME_SCALE && { ec2TimeScale: Number(process.env.VOLHOOK_BENCH_EC2_TIME_SCALE) }),
  ...(process.env.VOLHOOK_BENCH_REPORT_TIME_SCALE && { reportTimeScale: Number(process.env.VOLHOOK_BENCH_REPORT_TIME_SCALE) }),
  onEc2Calls: (_clusterId, stats) => totals.merge(stats),
  onError: (clusterId, itemKey, error, stage) =>
    process.stderr.write(`${JSON.stringify({ level: 'ERROR', stage, clusterId, itemKey, error: error instanceof Error ? error.message : String(error) })}\n`),
});

const app = new Hono();
app.get('/_bench/stats', (c) =>
  c.json(
    Object.fromEntries(
      [...totals.actions].map(([action, a]) => [
        action,
        { calls: a.calls, throttles: a.throttles, errors: a.errors, errorCodes: a.errorCodes, tokensGranted: a.tokensGranted, tokensWaited: a.tokensWaited, takes: a.takes },
      ]),
    ),
  ),
);
app.route('/', backend);

const server = await startBackendServer(app, '127.0.0.1', 0);
process.stdout.write(`READY ${server.url}\n`);
process.on('SIGTERM', () => {
  void server.stop().finally(() => process.exit(0));
});
