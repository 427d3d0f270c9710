/**
 * The command that installs one cluster's forwarder from the chart (charts/volhook-forwarder),
 * built in one place so that `cluster add` and a deployment's output print the same line.
 * The values are the chart's: `backendUrl`, `clusterId`, and `secret.existingSecret`, the
 * Secret (key `secret`) that `cluster add` prints.
 */
import { FORWARDER_SECRET } from './secrets.js';

export const FORWARDER_CHART = { release: 'volhook-forwarder', path: 'charts/volhook-forwarder', namespace: FORWARDER_SECRET.namespace } as const;

/**
 * Stands for the backend URL when it is not known: quoted as any value, so the line stays one
 * shell command, and no URL, so the forwarder refuses to start with it rather than send elsewhere.
 */
export const BACKEND_URL_PLACEHOLDER = '<HttpApiUrl from osls info>';

export interface HelmInstallInput {
  clusterId: string;
  /** The backend's base URL (`HttpApiUrl`); absent: {@link BACKEND_URL_PLACEHOLDER}. */
  backendUrl?: string;
  /** The Secret holding the signing secret, in the chart's namespace. */
  secretName: string;
}

/**
 * `helm upgrade --install volhook-forwarder charts/volhook-forwarder -n volhook-system
 * --create-namespace --set backendUrl=… --set clusterId=… --set secret.existingSecret=…`,
 * each value escaped for helm's `--set` and then quoted for a POSIX shell.
 */
export function helmInstallLine(input: HelmInstallInput): string {
  return [
    'helm upgrade --install',
    FORWARDER_CHART.release,
    FORWARDER_CHART.path,
    '-n',
    FORWARDER_CHART.namespace,
    '--create-namespace',
    helmSet('backendUrl', input.backendUrl ?? BACKEND_URL_PLACEHOLDER),
    helmSet('clusterId', input.clusterId),
    helmSet('secret.existingSecret', input.secretName),
  ].join(' ');
}

/** `kubectl apply` of the Secret `cluster add` printed, once saved to `file`. */
export function secretApplyLine(file: string): string {
  return `kubectl apply -f ${shellQuote(file)}`;
}

/**
 * `--set key=value`, or `--set-string` for a value helm's `--set` would turn into a number,
 * boolean or null (a cluster id may be all digits). In a value, helm reads `,` as the next
 * key and `\` as an escape, so both are escaped.
 */
function helmSet(key: string, value: string): string {
  const typed = /^(?:true|false|null|[-+]?\d+)$/i.test(value);
  return `${typed ? '--set-string' : '--set'} ${shellQuote(`${key}=${value.replace(/[\\,]/g, (c) => `\\${c}`)}`)}`;
}

/** A word a POSIX shell reads back as exactly `text`: bare when it is plain, else single-quoted. */
export function shellQuote(text: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Where the docs save the Secret `cluster add` prints (`… > volhook-forwarder-secret.yaml`). */
export const SECRET_FILE = 'volhook-forwarder-secret.yaml';

/**
 * The steps after `cluster add`, for a person: the namespace (the Secret goes in it before the
 * chart does), the Secret, the chart; and, when the backend URL is not known, what to put in
 * its place.
 */
export function installSteps(input: Omit<HelmInstallInput, 'secretName'>): string {
  const lines = [
    `next, in the cluster (the Secret is on stdout; saved, say, with > ${SECRET_FILE}):`,
    `  kubectl create namespace ${FORWARDER_CHART.namespace}`,
    `  ${secretApplyLine(SECRET_FILE)}`,
    `  ${helmInstallLine({ ...input, secretName: FORWARDER_SECRET.name })}`,
  ];
  if (input.backendUrl === undefined) {
    lines.push(`replace ${BACKEND_URL_PLACEHOLDER} with the HttpApiUrl that npx osls info prints (or run add with --api-url <url>).`);
  }
  return `${lines.join('\n')}\n`;
}
