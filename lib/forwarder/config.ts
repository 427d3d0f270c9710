/** The forwarder's configuration: validated once at start, from the environment or in code. */
// zod/mini, as the contract's schemas: classic zod in the forwarder cost its process ~450 KiB of
// bundled code to load and keep (bench scenario c), for a schema read once at start.
import * as z from 'zod/mini';
import { ClusterIdSchema } from '../contract/cluster-id.js';
import { EBS_DRIVER, MAX_ITEMS_PER_REQUEST, WebhookSecretSchema } from '../contract/index.js';
import { timingError, type LeaseTiming } from './lease.js';
import { DEFAULT_CADENCE } from './queue.js';

const text = () => z.string().check(z.minLength(1));
const int = (min: number, max?: number) => z.int().check(z.minimum(min), ...(max !== undefined ? [z.maximum(max)] : []));
const positiveInt = () => z.int().check(z.positive());
const positive = () => z.number().check(z.positive());

export const ForwarderConfigSchema = z
  .object({
    /** Backend base URL; requests go to `<apiUrl>/v1/clusters/<clusterId>/reconcile`. */
    apiUrl: z.url({ protocol: /^https?$/ }),
    /**
     * Standby backends (another Region or stage), tried in order when the one in use is
     * unavailable — no answer, or a 5xx — never on a refusal (failover.ts).
     */
    standbyApiUrls: z._default(z.array(z.url({ protocol: /^https?$/ })), []),
    /** While on a standby, how often the first backend is asked whether it accepts requests again. */
    failbackSeconds: z._default(positive(), 30),
    /** The registry's rule (lib/contract/cluster-id.ts): an id the backend would refuse is refused here. */
    clusterId: ClusterIdSchema,
    /** A mounted Secret file holding the signing secret; re-read when it changes. */
    secretFile: z.optional(text()),
    /** The signing secret itself (local use); its key must be 24–64 bytes. */
    secret: z.optional(WebhookSecretSchema),
    /**
     * A PEM bundle trusted for the backend's certificate besides the public roots: a private
     * backend, or a proxy that inspects TLS. Re-read when it changes.
     */
    caFile: z.optional(text()),
    /**
     * A client certificate and its key (PEM files, a kubernetes.io/tls Secret mounted) shown to
     * a backend behind mutual TLS; both or neither. Re-read when they change.
     */
    clientCertFile: z.optional(text()),
    clientKeyFile: z.optional(text()),
    provisioner: z._default(text(), EBS_DRIVER),
    driver: z._default(text(), EBS_DRIVER),
    /**
     * Beside the EBS CSI controller: only claims of `provisioner` are provisioned, and only the
     * PVs made for them reclaimed; attach, detach, resize and snapshots stay with the controller
     * (filter.ts). `provisioner` must then be another name than the controller's.
     */
    canary: z._default(z.boolean(), false),
    batchSize: z._default(int(1, MAX_ITEMS_PER_REQUEST), 100),
    /** Requests in flight at once. */
    concurrency: z._default(int(1, 256), 4),
    /** Every this often, re-offer every object of ours that is not settled. */
    resyncSeconds: z._default(positive(), 300),
    /** Health and metrics port (0: any free port). */
    port: z._default(int(0, 65_535), 8080),
    /** Listen address of the health server; default all interfaces. */
    listenHost: z.optional(text()),
    /** An API server by URL (the local stack) instead of in-cluster / KUBECONFIG. */
    kubeServer: z.optional(z.url()),
    logLevel: z._default(z.enum(['debug', 'info', 'warn', 'error']), 'info'),
    /**
     * Leader election on a Lease (two or more replicas): only the holder sends; the others
     * keep their caches warm and take over when it stops renewing or releases it.
     */
    leaderElect: z._default(z.boolean(), false),
    leaseName: z._default(text(), 'volhook-forwarder'),
    /** The Lease's namespace: the pod's own (downward API) in a cluster. */
    leaseNamespace: z.optional(text()),
    /** This replica's holderIdentity; default `<hostname>_<random uuid>`, as the control plane's components. */
    leaderIdentity: z.optional(text()),
    /** client-go's defaults: 15 s, 10 s, 2 s. The Lease holds whole seconds. */
    leaseDurationSeconds: z._default(int(1), 15),
    renewDeadlineSeconds: z._default(positive(), 10),
    retryPeriodSeconds: z._default(positive(), 2),
    /**
     * `/readyz` fails once every request to the backend was refused (401/403/404, another 4xx,
     * 5xx, no answer) for this long, so a rollout with a wrong secret stops; the first request
     * served makes it pass again.
     */
    refusedReadySeconds: z._default(positive(), 60),
    // Tuning, not from the environment: tests shorten these.
    /** While `cadenceBusyKeys` or more keys are queued, sends go out on this grid (0: never). */
    cadenceMs: z._default(int(0), DEFAULT_CADENCE.gridMs),
    cadenceBusyKeys: z._default(int(1), DEFAULT_CADENCE.busyKeys),
    requestTimeoutMs: z._default(positiveInt(), 25_000),
    backoffInitialMs: z._default(positiveInt(), 1_000),
    backoffMaxMs: z._default(positiveInt(), 5 * 60_000),
    informerRestartMs: z._default(positiveInt(), 2_000),
    shutdownTimeoutMs: z._default(int(0), 10_000),
    /** How often the signing secret's file and the TLS files (tls.ts) are looked at for a change. */
    secretPollMs: z._default(positiveInt(), 5_000),
    /** After this long of nothing but refusals, Warning Events go on the claims and VolumeAttachments held back. */
    refusedEventMs: z._default(int(0), 10_000),
  })
  .check(
    z.refine((c) => (c.secret === undefined) !== (c.secretFile === undefined), {
      message: 'exactly one of VOLHOOK_SECRET_FILE or VOLHOOK_SECRET must be set',
      path: ['secretFile'],
    }),
    z.superRefine((c, ctx) => {
      // Reported at the one missing, naming both.
      if ((c.clientCertFile === undefined) === (c.clientKeyFile === undefined)) return;
      const missing = c.clientCertFile === undefined ? 'clientCertFile' : 'clientKeyFile';
      ctx.addIssue({ code: 'custom', message: 'VOLHOOK_CLIENT_CERT_FILE and VOLHOOK_CLIENT_KEY_FILE go together: set both or neither', path: [missing] });
    }),
    z.refine((c) => c.clientCertFile === undefined || c.apiUrl.startsWith('https:'), {
      message: 'a client certificate (VOLHOOK_CLIENT_CERT_FILE) is only shown over https: VOLHOOK_API_URL must be https://',
      path: ['apiUrl'],
    }),
    z.refine((c) => c.clientCertFile === undefined || c.standbyApiUrls.every((url) => url.startsWith('https:')), {
      message: 'a client certificate (VOLHOOK_CLIENT_CERT_FILE) is only shown over https: every standby URL must be https://',
      path: ['standbyApiUrls'],
    }),
    z.refine((c) => new Set([c.apiUrl, ...c.standbyApiUrls].map(normalUrl)).size === 1 + c.standbyApiUrls.length, {
      message: 'names a backend twice (VOLHOOK_API_URL and VOLHOOK_STANDBY_API_URLS must all differ)',
      path: ['standbyApiUrls'],
    }),
    z.refine((c) => !c.canary || c.provisioner !== c.driver, {
      message: "a canary serves a provisioner name of its own: VOLHOOK_PROVISIONER must differ from the EBS CSI controller's (VOLHOOK_DRIVER), or both would provision the same claims",
      path: ['canary'],
    }),
    z.refine((c) => !c.leaderElect || c.leaseNamespace !== undefined, {
      message: "is required with leader election (the namespace of the Lease: the pod's own)",
      path: ['leaseNamespace'],
    }),
    z.superRefine((c, ctx) => {
      const problem = timingError(leaseTiming(c));
      if (problem) ctx.addIssue({ code: 'custom', message: problem, path: ['renewDeadlineSeconds'] });
    }),
  );

/** A backend URL without trailing slashes, as requests are built from it. */
function normalUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Every backend, in the order they are tried: VOLHOOK_API_URL, then the standbys. */
export function backendUrls(c: Pick<ForwarderConfig, 'apiUrl' | 'standbyApiUrls'>): string[] {
  return [c.apiUrl, ...c.standbyApiUrls];
}

/** The election's timings in ms, from the configuration's seconds. */
export function leaseTiming(c: { leaseDurationSeconds: number; renewDeadlineSeconds: number; retryPeriodSeconds: number }): LeaseTiming {
  return { leaseDurationMs: c.leaseDurationSeconds * 1000, renewDeadlineMs: c.renewDeadlineSeconds * 1000, retryPeriodMs: c.retryPeriodSeconds * 1000 };
}

export type ForwarderConfig = z.infer<typeof ForwarderConfigSchema>;
export type ForwarderConfigInput = z.input<typeof ForwarderConfigSchema>;

/** The environment variable behind each setting. */
export const ENV_VARS = {
  apiUrl: 'VOLHOOK_API_URL',
  standbyApiUrls: 'VOLHOOK_STANDBY_API_URLS',
  failbackSeconds: 'VOLHOOK_FAILBACK_SECONDS',
  clusterId: 'VOLHOOK_CLUSTER_ID',
  secretFile: 'VOLHOOK_SECRET_FILE',
  secret: 'VOLHOOK_SECRET',
  caFile: 'VOLHOOK_CA_FILE',
  clientCertFile: 'VOLHOOK_CLIENT_CERT_FILE',
  clientKeyFile: 'VOLHOOK_CLIENT_KEY_FILE',
  provisioner: 'VOLHOOK_PROVISIONER',
  driver: 'VOLHOOK_DRIVER',
  canary: 'VOLHOOK_CANARY',
  batchSize: 'VOLHOOK_BATCH_SIZE',
  concurrency: 'VOLHOOK_CONCURRENCY',
  resyncSeconds: 'VOLHOOK_RESYNC_SECONDS',
  port: 'VOLHOOK_PORT',
  listenHost: 'VOLHOOK_LISTEN_HOST',
  kubeServer: 'VOLHOOK_KUBE_SERVER',
  logLevel: 'VOLHOOK_LOG_LEVEL',
  leaderElect: 'VOLHOOK_LEADER_ELECT',
  leaseName: 'VOLHOOK_LEASE_NAME',
  leaseNamespace: 'VOLHOOK_LEASE_NAMESPACE',
  leaderIdentity: 'VOLHOOK_LEADER_IDENTITY',
  leaseDurationSeconds: 'VOLHOOK_LEASE_DURATION_SECONDS',
  renewDeadlineSeconds: 'VOLHOOK_RENEW_DEADLINE_SECONDS',
  retryPeriodSeconds: 'VOLHOOK_RETRY_PERIOD_SECONDS',
  refusedReadySeconds: 'VOLHOOK_REFUSED_READY_SECONDS',
} as const satisfies Partial<Record<keyof ForwarderConfig, string>>;

/**
 * Variables no longer read, and why. `VOLHOOK_WRITE_BACK`: who applies writes is the cluster's
 * registration alone (`writeBack`); the forwarder applies whatever writes an answer holds
 * (see sender.ts).
 */
export const RETIRED_ENV_VARS: Readonly<Record<string, string>> = {
  VOLHOOK_WRITE_BACK: "no longer read: the cluster's registration (writeBack) says who applies writes, and the forwarder applies every write the backend answers with",
};

/** The retired variables set in `env`, each with why it is ignored: for a warning at start. */
export function retiredSettings(env: Record<string, string | undefined>): { name: string; why: string }[] {
  return Object.entries(RETIRED_ENV_VARS)
    .filter(([name]) => (env[name]?.trim() ?? '') !== '')
    .map(([name, why]) => ({ name, why }));
}

const NUMERIC = new Set<string>(['failbackSeconds', 'batchSize', 'concurrency', 'resyncSeconds', 'port', 'leaseDurationSeconds', 'renewDeadlineSeconds', 'retryPeriodSeconds', 'refusedReadySeconds']);
const BOOLEAN = new Set<string>(['leaderElect', 'canary']);
/** Comma-separated lists; empty entries (a trailing comma) are dropped. */
const LIST = new Set<string>(['standbyApiUrls']);

/** A setting that is missing or invalid; the message names the variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function parseConfig(input: ForwarderConfigInput, names: Partial<Record<string, string>> = {}): ForwarderConfig {
  const parsed = ForwarderConfigSchema.safeParse(input, { error: (issue) => (issue.input === undefined ? 'is required' : undefined) });
  if (parsed.success) return parsed.data;
  // Each setting is named as the operator gave it: by its environment variable.
  const named = parsed.error.issues.map((issue) => ({ ...issue, path: issue.path.map((p, i) => (i === 0 ? (names[String(p)] ?? p) : p)) }));
  throw new ConfigError(`invalid forwarder configuration:\n${z.prettifyError(new z.core.$ZodError(named))}`);
}

/** Reads `VOLHOOK_*`; empty variables count as unset. Throws `ConfigError` naming the variable. */
export function configFromEnv(env: Record<string, string | undefined>): ForwarderConfig {
  const input: Record<string, unknown> = {};
  for (const [field, name] of Object.entries(ENV_VARS)) {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') continue;
    if (NUMERIC.has(field)) input[field] = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
    else if (LIST.has(field)) input[field] = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
    else if (BOOLEAN.has(field)) input[field] = raw === 'true' ? true : raw === 'false' ? false : raw;
    else input[field] = raw;
  }
  return parseConfig(input as ForwarderConfigInput, ENV_VARS);
}
