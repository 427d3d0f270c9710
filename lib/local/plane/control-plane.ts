/**
 * The real Kubernetes control plane on loopback: etcd, kube-apiserver (RBAC and Node
 * authorization, the default admission plugins and NodeRestriction, static tokens), kube-controller-manager with
 * the controllers volhook's flows meet (each under its own ServiceAccount, as
 * `--use-service-account-credentials` has it in a real cluster) and kube-scheduler, built
 * from tools/kube. Every port is a free one unless given; everything lives in `dir` (data,
 * certificates, keys, kubeconfigs, one log per process) and stops with `stop()`.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { accessFromKubeConfig } from '../../forwarder/kube/access.js';
import { kubeRest, type KubeRest } from '../../forwarder/kube/rest.js';
import { kubeConfigFor } from '../../kube/clients.js';
import { kubeconfigText } from './kubeconfig.js';
import { freePort, startProcess, type PlaneProcess } from './processes.js';

export interface ControlPlaneBinaries {
  etcd: string;
  apiserver: string;
  controllerManager: string;
  scheduler: string;
}

/** A user of the static token file: its name and groups. */
export interface PlaneUser {
  name: string;
  groups: string[];
}

export interface ControlPlaneOptions {
  binaries: ControlPlaneBinaries;
  /** Data, certificates, kubeconfigs and logs. */
  dir: string;
  host?: string;
  /** kube-apiserver's port; a free one by default. */
  apiserverPort?: number;
  /** Users beyond the administrator, each given a token (e.g. the nodes' `system:node:NAME`). */
  users?: PlaneUser[];
  /** How long to wait for the plane to be ready. */
  timeoutMs?: number;
}

/**
 * The controllers kube-controller-manager runs: the volume controllers, and those the
 * workloads of the scenarios need. No node-lifecycle controller: with no kubelet it would
 * taint the nodes and evict their pods.
 */
export const CONTROLLERS = [
  'persistentvolume-binder-controller',
  'persistentvolume-attach-detach-controller',
  'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller',
  'persistentvolume-expander-controller',
  'namespace-controller',
  'garbage-collector-controller',
  'serviceaccount-controller',
  'serviceaccount-token-controller',
  'root-ca-certificate-publisher-controller',
  'deployment-controller',
  'replicaset-controller',
  'statefulset-controller',
] as const;

export interface ControlPlane {
  /** `https://127.0.0.1:PORT` */
  url: string;
  /** Base64 PEM of the CA of the API server's certificate. */
  caData: string;
  /** The administrator's token (`system:masters`). */
  adminToken: string;
  /** The token of each user given in the options, by name. */
  tokens: ReadonlyMap<string, string>;
  /** A client of the API as the holder of `token` (default the administrator). */
  rest(token?: string): KubeRest;
  /** The kubeconfig of the holder of `token` (default the administrator). */
  kubeconfig(token?: string): string;
  versions: { kubernetes: string };
  processes: readonly PlaneProcess[];
  dir: string;
  stop(): Promise<void>;
}

interface Probe {
  status: number;
  body: string;
}

function probe(url: string, options: { token?: string; ca?: string } = {}): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const secure = url.startsWith('https:');
    const headers = options.token ? { Authorization: `Bearer ${options.token}` } : {};
    const send = secure ? request : httpRequest;
    const req = send(url, { headers, ...(secure ? (options.ca ? { ca: options.ca } : { rejectUnauthorized: false }) : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.setTimeout(5_000, () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', reject);
    req.end();
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, deadline: number, watched: readonly PlaneProcess[]): Promise<void> {
  let lastError = '';
  for (;;) {
    const dead = watched.find((p) => p.done());
    if (dead) throw new Error(`${dead.name} exited (${await dead.exited}) before ${what}; its log: ${dead.log}`);
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within the time allowed${lastError ? ` (last: ${lastError})` : ''}; logs in ${watched.map((p) => p.log).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const token = () => randomBytes(24).toString('hex');

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const host = options.host ?? '127.0.0.1';
  const dir = options.dir;
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  const processes: PlaneProcess[] = [];
  const stop = async () => {
    for (const p of processes.splice(0).reverse()) await p.stop();
  };
  try {
    for (const sub of ['etcd', 'certs', 'logs']) await mkdir(join(dir, sub), { recursive: true, mode: 0o700 });
    for (const [name, binary] of Object.entries(options.binaries)) {
      if (!existsSync(binary)) throw new Error(`no ${name} binary at ${binary}: run npm run kube:build`);
    }
    const [etcdPort, peerPort, apiserverPort, kcmPort, schedulerPort] = await Promise.all([
      freePort(host),
      freePort(host),
      freePort(host, options.apiserverPort),
      freePort(host),
      freePort(host),
    ]);
    const log = (name: string) => join(dir, 'logs', `${name}.log`);

    // The ServiceAccount tokens' signing key.
    const saKey = join(dir, 'sa.key');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    await writeFile(saKey, privateKey, { mode: 0o600 });

    const adminToken = token();
    const componentUsers: PlaneUser[] = [
      { name: 'system:kube-controller-manager', groups: [] },
      { name: 'system:kube-scheduler', groups: [] },
    ];
    const tokens = new Map<string, string>();
    for (const user of [...componentUsers, ...(options.users ?? [])]) tokens.set(user.name, token());
    const csv = (s: string) => `"${s.replace(/"/g, '""')}"`;
    const lines = [
      `${adminToken},admin,admin,${csv('system:masters')}`,
      ...[...componentUsers, ...(options.users ?? [])].map((u) => `${tokens.get(u.name)},${u.name},${u.name},${csv(u.groups.join(','))}`),
    ];
    const tokenFile = join(dir, 'tokens.csv');
    await writeFile(tokenFile, `${lines.join('\n')}\n`, { mode: 0o600 });

    const etcdUrl = `http://${host}:${etcdPort}`;
    const peerUrl = `http://${host}:${peerPort}`;
    const etcd = startProcess(
      'etcd',
      options.binaries.etcd,
      [
        '--name=volhook',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=volhook=${peerUrl}`,
        '--unsafe-no-fsync',
      ],
      log('etcd'),
    );
    processes.push(etcd);
    await waitFor('etcd healthy', async () => (await probe(`${etcdUrl}/health`)).status === 200, deadline, processes);

    const url = `https://${host}:${apiserverPort}`;
    const certDir = join(dir, 'certs');
    const apiserver = startProcess(
      'kube-apiserver',
      options.binaries.apiserver,
      [
        `--etcd-servers=${etcdUrl}`,
        `--bind-address=${host}`,
        `--advertise-address=${host}`,
        `--secure-port=${apiserverPort}`,
        `--cert-dir=${certDir}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${saKey}`,
        `--service-account-signing-key-file=${saKey}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--authorization-mode=Node,RBAC',
        // On top of the defaults, as kubeadm and EKS run it: a node may change only its own objects.
        '--enable-admission-plugins=NodeRestriction',
        `--token-auth-file=${tokenFile}`,
        '--endpoint-reconciler-type=none',
      ],
      log('kube-apiserver'),
    );
    processes.push(apiserver);
    const certFile = join(certDir, 'apiserver.crt');
    await waitFor('kube-apiserver ready', async () => existsSync(certFile) && (await probe(`${url}/readyz`, { token: adminToken })).status === 200, deadline, processes);
    // The self-signed serving certificate is written with the CA that signed it.
    const caPem = await readFile(certFile, 'utf8');
    const caData = Buffer.from(caPem).toString('base64');
    const kubeconfig = (holder = adminToken) => kubeconfigText({ server: url, token: holder, caData });

    const componentConfig = async (user: string) => {
      const file = join(dir, `${user.replace(/[^\w-]/g, '_')}.kubeconfig`);
      await writeFile(file, kubeconfigText({ server: url, token: tokens.get(user)!, caFile: certFile, user }), { mode: 0o600 });
      return file;
    };
    const common = (port: number) => [`--bind-address=${host}`, `--secure-port=${port}`, '--leader-elect=false', '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics'];
    const kcmConfig = await componentConfig('system:kube-controller-manager');
    processes.push(
      startProcess(
        'kube-controller-manager',
        options.binaries.controllerManager,
        [
          `--kubeconfig=${kcmConfig}`,
          `--authentication-kubeconfig=${kcmConfig}`,
          `--authorization-kubeconfig=${kcmConfig}`,
          ...common(kcmPort),
          '--use-service-account-credentials=true',
          `--service-account-private-key-file=${saKey}`,
          `--root-ca-file=${certFile}`,
          `--controllers=${CONTROLLERS.join(',')}`,
        ],
        log('kube-controller-manager'),
      ),
    );
    const schedulerConfig = await componentConfig('system:kube-scheduler');
    processes.push(
      startProcess(
        'kube-scheduler',
        options.binaries.scheduler,
        [`--kubeconfig=${schedulerConfig}`, `--authentication-kubeconfig=${schedulerConfig}`, `--authorization-kubeconfig=${schedulerConfig}`, ...common(schedulerPort)],
        log('kube-scheduler'),
      ),
    );
    await waitFor('kube-controller-manager healthy', async () => (await probe(`https://${host}:${kcmPort}/healthz`)).status === 200, deadline, processes);
    await waitFor('kube-scheduler healthy', async () => (await probe(`https://${host}:${schedulerPort}/healthz`)).status === 200, deadline, processes);

    const clientFor = (holder = adminToken) => kubeRest(accessFromKubeConfig(kubeConfigFor({ server: url, token: holder, caData })));
    const admin = clientFor();
    const version = await admin.request<{ gitVersion: string }>('GET', '/version');
    // The controllers run under their ServiceAccounts: one that exists says they are up and authorized.
    await waitFor(
      'the serviceaccount controller made default/default',
      async () => {
        await admin.request('GET', '/api/v1/namespaces/default/serviceaccounts/default');
        return true;
      },
      deadline,
      processes,
    );
    return {
      url,
      caData,
      adminToken,
      tokens,
      rest: clientFor,
      kubeconfig,
      versions: { kubernetes: version.gitVersion },
      processes,
      dir,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
