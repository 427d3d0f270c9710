/**
 * kubectl as a user drives it, against an e2e stack's API: YAML manifests created from files,
 * merge patches, its own HOME (its discovery cache); and the manifests several scenarios share.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { IMMEDIATE_CLASS } from './stack.js';

const run = promisify(execFile);

export interface Kubectl {
  (...args: string[]): Promise<string>;
  /** `kubectl create -f` of a YAML manifest. */
  create(yaml: string): Promise<string>;
  /** `kubectl patch <kind> <name> -n <ns> --type merge -p <json>`. */
  patch(kind: string, namespace: string, name: string, patch: object): Promise<string>;
  close(): Promise<void>;
}

/**
 * kubectl against `target` — an API server URL, or a stack's kubeconfig (the administrator's
 * token and CA on the real plane) — with its own HOME (its discovery cache) removed by `close`.
 */
export async function kubectlFor(target: string | { kubeconfig: string }): Promise<Kubectl> {
  const home = await mkdtemp(join(tmpdir(), 'volhook-kubectl-'));
  let connection: string[];
  if (typeof target === 'string') {
    connection = ['--server', target];
  } else {
    const file = join(home, 'kubeconfig');
    await writeFile(file, target.kubeconfig, { mode: 0o600 });
    connection = ['--kubeconfig', file];
  }
  let files = 0;
  const kubectl = (async (...args: string[]) => {
    try {
      const { stdout } = await run('kubectl', [...connection, ...args], { env: { PATH: process.env.PATH ?? '', HOME: home }, timeout: 30_000 });
      return stdout;
    } catch (err) {
      const e = err as { stderr?: string };
      throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr ?? String(err)}`);
    }
  }) as Kubectl;
  kubectl.create = async (yaml) => {
    const file = join(home, `manifest-${++files}.yaml`);
    await writeFile(file, yaml);
    return kubectl('create', '-f', file);
  };
  kubectl.patch = (kind, namespace, name, patch) => kubectl('patch', kind, name, '-n', namespace, '--type', 'merge', '-p', JSON.stringify(patch));
  kubectl.close = () => rm(home, { recursive: true, force: true });
  return kubectl;
}

/** A claim `name` in `ns` of the stack's Immediate class, `spec` (lines indented two) added to its spec. */
export const claimYaml = (ns: string, name: string, { size = '4Gi', spec = '' }: { size?: string; spec?: string } = {}) => `apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: ${name}, namespace: ${ns} }
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ${IMMEDIATE_CLASS}
  resources: { requests: { storage: ${size} } }
${spec}`;

/** A pod `name` in `ns` mounting the claim `claimName` at /data. */
export const podYaml = (ns: string, name: string, claimName: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: app
      image: nginx:1.27
      volumeMounts:
        - { name: data, mountPath: /data }
  volumes:
    - name: data
      persistentVolumeClaim: { claimName: ${claimName} }
`;
