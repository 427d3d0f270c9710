/**
 * The local stack on the real control plane for the tests of test/real-plane: built first if
 * missing (tools/kube), on free ports, its forwarder's log lines kept for assertions; clients
 * of its API as the administrator (client-node, from the kubeconfig the stack writes).
 */
import { AppsV1Api, CoreV1Api, KubeConfig, RbacAuthorizationV1Api, StorageV1Api } from '@kubernetes/client-node';
import type { LogFields, Logger } from '../../lib/forwarder/logger.js';
import { startLocalStack, type RealLocalStack } from '../../lib/local/stack/index.js';
import { goVersion } from '../../tools/kube/build.js';
import { realPlaneInputs } from '../../tools/kube/inputs.js';

/** Why these tests cannot run here, or undefined when they can: they need Go to build the plane. */
export const withoutGo: string | undefined = goVersion()
  ? undefined
  : 'SKIPPED: the real-plane tests build Kubernetes from tools/kube with Go, and there is no `go` on the PATH';
if (withoutGo) console.warn(withoutGo);

export interface LogLine {
  level: string;
  msg: string;
  fields: LogFields;
}

export interface RealStackHarness {
  stack: RealLocalStack;
  core: CoreV1Api;
  apps: AppsV1Api;
  storage: StorageV1Api;
  rbac: RbacAuthorizationV1Api;
  /** The forwarder's log lines so far. */
  logs: LogLine[];
  /** The forwarder's /metrics text. */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}

export async function startRealStack(): Promise<RealStackHarness> {
  const inputs = await realPlaneInputs((line) => console.log(line));
  const logs: LogLine[] = [];
  const keep =
    (level: string) =>
    (msg: string, fields: LogFields = {}) =>
      void logs.push({ level, msg, fields });
  const logger: Logger = { debug() {}, info: keep('info'), warn: keep('warn'), error: keep('error') };
  const stack = await startLocalStack({
    ports: { backend: 0, ec2: 0, kube: 0 },
    ec2: { timeScale: 20 },
    forwarder: { port: 0, backoffInitialMs: 200, backoffMaxMs: 2_000 },
    logger,
    kube: { ...inputs, logger },
  });
  const kc = new KubeConfig();
  kc.loadFromString(stack.kubeconfig);
  return {
    stack,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    storage: kc.makeApiClient(StorageV1Api),
    rbac: kc.makeApiClient(RbacAuthorizationV1Api),
    logs,
    async metrics() {
      const res = await fetch(`http://127.0.0.1:${stack.forwarder()!.port}/metrics`);
      return res.text();
    },
    stop: () => stack.stop(),
  };
}
