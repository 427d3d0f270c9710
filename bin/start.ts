/**
 * `npm start`: the local stack on the default ports, ready for kubectl and the AWS CLI.
 * Environment: AWS_ENDPOINT_URL_EC2 (or AWS_ENDPOINT_URL) to use another EC2 instead of the
 * simulator; VOLHOOK_EC2_TIME_SCALE to speed the simulator up; VOLHOOK_EC2_STATE_DIR to keep
 * its volumes across restarts; VOLHOOK_QUIET=1 to silence the per-reconcile log;
 * VOLHOOK_BACKEND_PORT, VOLHOOK_EC2_PORT, VOLHOOK_KUBE_PORT, VOLHOOK_LOCAL_FORWARDER_PORT (the
 * forwarder's health and metrics, default 8789) to move the ports; VOLHOOK_LOG_LEVEL, the
 * forwarder's log level (default warn: its warnings and errors, as JSON lines on stderr);
 * VOLHOOK_LOCAL_DIR (default .volhook/local) for the registration, the volume reports and
 * the description of the running stack that `npm run cluster -- audit local` reads, and the
 * `kubeconfig` of its Kubernetes. VOLHOOK_KUBE=real runs the real control plane (etcd,
 * kube-apiserver, kube-controller-manager, kube-scheduler from tools/kube, built first if
 * missing) instead of the simulated API: docs/real-plane.md.
 */
import * as z from 'zod/mini';
import { createJsonLogger } from '../lib/forwarder/index.js';
import { DEFAULT_FORWARDER_PORT, localDirFrom, portInUseMessage, PortInUseError, startLocalStack, type LocalStackOptions } from '../lib/local/stack/index.js';
import { realPlaneInputs } from '../tools/kube/inputs.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const env = process.env;
const started = Date.now();
const timeScale = env.VOLHOOK_EC2_TIME_SCALE ? Number(env.VOLHOOK_EC2_TIME_SCALE) : 1;
if (!(timeScale > 0)) {
  console.error(`VOLHOOK_EC2_TIME_SCALE must be a positive number, not "${env.VOLHOOK_EC2_TIME_SCALE}"`);
  process.exit(2);
}

function port(name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65_535) {
    console.error(`${name} must be a port number, not "${raw}"`);
    process.exit(2);
  }
  return value;
}

const LogLevelSchema = z.enum(['debug', 'info', 'warn', 'error']);
const logLevel = LogLevelSchema.safeParse(env.VOLHOOK_LOG_LEVEL || 'warn');
if (!logLevel.success) {
  console.error(`VOLHOOK_LOG_LEVEL must be one of ${LogLevelSchema.options.join(', ')}, not "${env.VOLHOOK_LOG_LEVEL}"`);
  process.exit(2);
}
// The forwarder's own JSON lines, on stderr beside the backend's: a refusal shows where it happens.
const forwarderLogger = createJsonLogger({ level: logLevel.data, base: { component: 'forwarder' }, write: (line) => process.stderr.write(line) });

const KubeModeSchema = z.enum(['simulated', 'real']);
const kubeMode = KubeModeSchema.safeParse(env.VOLHOOK_KUBE || 'simulated');
if (!kubeMode.success) {
  console.error(`VOLHOOK_KUBE must be one of ${KubeModeSchema.options.join(', ')}, not "${env.VOLHOOK_KUBE}"`);
  process.exit(2);
}
const real = kubeMode.data === 'real';

const localDir = localDirFrom(env);
const kube = real
  ? await realPlaneInputs().catch((err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(1);
    })
  : undefined;
const options: LocalStackOptions = {
  localDir,
  ports: { backend: port('VOLHOOK_BACKEND_PORT'), ec2: port('VOLHOOK_EC2_PORT'), kube: port('VOLHOOK_KUBE_PORT') },
  forwarder: { port: port('VOLHOOK_LOCAL_FORWARDER_PORT') ?? DEFAULT_FORWARDER_PORT },
  logger: forwarderLogger,
  ec2Endpoint: env.AWS_ENDPOINT_URL_EC2 ?? env.AWS_ENDPOINT_URL,
  ec2: { timeScale, ...(env.VOLHOOK_EC2_STATE_DIR ? { stateDir: env.VOLHOOK_EC2_STATE_DIR } : {}) },
  onResult: env.VOLHOOK_QUIET
    ? undefined
    : (_cluster, _item, result) => {
        const detail = result.outcome === 'failed' ? ` ${result.reason}: ${result.message}` : result.outcome === 'requeue' ? ` in ${result.requeueAfterSeconds}s` : '';
        console.log(`${new Date().toISOString()} reconcile ${result.key} -> ${result.outcome}${detail}`);
      },
};
// The node agents' warnings, as lines of their own.
const planeLogger = createJsonLogger({ level: logLevel.data, base: { component: 'node-agent' }, write: (line) => process.stderr.write(line) });
const stack = await (kube ? startLocalStack({ ...options, kube: { ...kube, logger: planeLogger } }) : startLocalStack(options)).catch((err: unknown) => {
  if (!(err instanceof PortInUseError)) throw err;
  console.error(portInUseMessage(err));
  process.exit(1);
});

const { urls } = stack;
console.log(`volhook local stack is up (${Date.now() - started} ms)

  backend      ${urls.backend}   (POST /v1/clusters/${stack.clusterId}/reconcile, GET /healthz)
  EC2          ${urls.ec2}${stack.simulator ? `   (simulator, time scale ${timeScale}; stats: ${urls.ec2}/_sim/stats)` : '   (external endpoint)'}
  Kubernetes   ${urls.kube}   (${'real' in stack ? `the real control plane, ${stack.real.plane.versions.kubernetes}; logs in ${stack.real.plane.dir}/logs` : 'simulated; VOLHOOK_KUBE=real for the real control plane'})
  kubeconfig   ${stack.kubeconfigFile}
  forwarder    http://127.0.0.1:${stack.forwarder()?.port}   (GET /metrics, /readyz; log level ${logLevel.data}: VOLHOOK_LOG_LEVEL)

  nodes:  ${stack.nodes.map((n) => `${n.name} (${n.zone}, ${n.instanceId})`).join('\n          ')}
  StorageClasses: gp3 (default, WaitForFirstConsumer), gp3-retain, io2 (Immediate), gp2 (in-tree kubernetes.io/aws-ebs, CSI migration)

Try it:
  export KUBECONFIG=${stack.kubeconfigFile}
  kubectl apply -f infra/examples/pvc-and-pod.yaml
  kubectl get pvc,pv,volumeattachments
  npm run cluster -- audit ${stack.clusterId}            (orphaned, lost and drifted disks; files in ${localDir})
  AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local aws ec2 describe-volumes --endpoint-url ${urls.ec2} --region ${stack.region}

Ctrl-C stops everything.`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping…');
    void stack.stop().then(() => process.exit(0));
  });
}
