/**
 * Parses `npm run cluster -- <command> <id> [options]` into a command, purely: no files are
 * read and nothing is written here, so a bad argument can never leave a half-done change.
 * Every refusal is a UsageError whose message names the argument.
 */
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { isReservedTagKey, RESERVED_TAG_KEYS_TEXT } from '../contract/tags.js';
import { ClusterIdSchema, type ClusterRegistrationInput } from '../registry/registration.js';
import { normalizeSsmPath } from '../registry/ssm-registry.js';
import { isVolumeType, MAX_VOLUME_SIZE_GIB, VOLUME_TYPES } from '../storageclass/volume-types.js';

export const DEFAULT_REGISTRY_FILE = '.volhook/clusters.json';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type RegistryTarget =
  | { kind: 'file'; path: string }
  | { kind: 'ssm'; path: string; region?: string };

/**
 * The settings `add` was given: the registration's fields as its schema takes them, less the
 * id and secrets the CLI makes, with files in place of the API credentials (read when it runs).
 */
export type RegistrationSettings = Omit<ClusterRegistrationInput, 'clusterId' | 'secrets' | 'kubernetes'> & {
  kubernetes?: Pick<NonNullable<ClusterRegistrationInput['kubernetes']>, 'server'> & { tokenFile?: string; caFile?: string };
};

export type ClusterCommand =
  | { command: 'add'; clusterId: string; target: RegistryTarget; settings: RegistrationSettings }
  | { command: 'rotate-secret'; clusterId: string; target: RegistryTarget; finish: boolean }
  | RemoveCommand
  | AuditCommand
  | { command: 'show'; clusterId: string; target: RegistryTarget; showSecrets: boolean }
  | AdoptCommand
  | { command: 'help' };

/** Where the audit reads the cluster's volume reports: the backend's directory or DynamoDB table. */
export type ReportsTarget = { kind: 'dir'; path: string } | { kind: 'table'; name: string };

export interface AuditCommand {
  command: 'audit';
  clusterId: string;
  target: RegistryTarget;
  /** --file or --ssm-path was given: no looking for a running local stack. */
  targetGiven: boolean;
  region?: string;
  reports?: ReportsTarget;
  /** Default: the registration's `audit.graceSeconds`, else one hour. */
  graceMs?: number;
  delete: boolean;
  /**
   * Also delete orphaned snapshots: asked for on its own, since a snapshot whose content was
   * deleted under Retain (a backup tool keeping its snapshots) is an orphan by every test.
   */
  deleteSnapshots: boolean;
  /**
   * `--volume`: the disks to delete, and only these (with `--delete`); one whose last known PV
   * had Retain is deleted only so. Absent: every provably orphaned disk that is not retained.
   */
  volumes?: string[];
  /** `--snapshot`: likewise for snapshots (with `--delete-snapshots`). */
  snapshots?: string[];
  json: boolean;
}

export interface RemoveCommand {
  command: 'remove';
  clusterId: string;
  target: RegistryTarget;
  targetGiven: boolean;
  /** Also delete the disks the cluster leaves behind, after a confirmation. */
  deleteVolumes: boolean;
  /** Confirmed already (scripts). */
  yes: boolean;
  region?: string;
  reports?: ReportsTarget;
}

/** Where `adopt` reads the cluster's PersistentVolumes: a `kubectl get pv -o json` file, or the cluster. */
export type PvSource = { kind: 'file'; path: string } | { kind: 'cluster'; kubeconfig?: string; context?: string };

export interface AdoptCommand {
  command: 'adopt';
  clusterId: string;
  /** The registry holding the cluster's registration: adopt refuses an id that is not registered. */
  target: RegistryTarget;
  source: PvSource;
  /** The disks' region; default: the registration's. */
  region?: string;
  /** Tag; without it, only say what would be tagged. */
  apply: boolean;
  json: boolean;
}

export const USAGE = `usage: npm run cluster -- <command> <cluster-id> [options]

commands:
  add <id>                 register a cluster with a new secret; prints the forwarder's Secret
  rotate-secret <id>       add a new secret (old and new both accepted); prints the Secret
  rotate-secret <id> --finish, remove-old-secrets <id>
                           keep only the newest secret
  remove <id>              delete the registration
  remove <id> --delete-volumes
                           also list the disks the cluster leaves behind and delete them
                           after a confirmation (--yes for scripts)
  audit <id>               orphaned, lost and drifted disks of the cluster, with their size
                           and monthly cost; --delete marks the provably orphaned ones and
                           removes those marked by an earlier audit that a report received
                           since still does not name
  show <id>                print the registration (secrets redacted unless --show-secrets)
  adopt <id>               tag the disks of the cluster's EBS PersistentVolumes so volhook owns
                           them (disks the EBS CSI controller made); a dry run unless --apply

where (one of; default --file ${DEFAULT_REGISTRY_FILE}):
  --file <path>            a local registry file (the local stack, npm run offline)
  --ssm-path <path>        SSM Parameter Store, e.g. /volhook/dev/clusters/
  --ssm-region <region>    region of that SSM (default: AWS_REGION / the AWS config)

add options:
  --region <region>        the cluster's AWS region (default: AWS_REGION)
  --zones a,b              zones volumes may be created in (default: any)
  --types gp3,io2          volume types the cluster may use (default: all)
  --max-size-gib <n>       largest volume (default: 16384)
  --tag k=v                extra tag on every volume; repeatable
  --write-back forwarder|direct
  --kube-server <url>      with --write-back direct: the cluster's API server
  --kube-token-file <path> with --write-back direct: a bearer token for it
  --kube-ca-file <path>    with --write-back direct: its CA certificate (PEM)

audit and remove --delete-volumes options (AWS credentials: the SDK's default chain;
endpoint: AWS_ENDPOINT_URL_EC2; with neither --file nor --ssm-path, a running npm start
(its .volhook/local, or VOLHOOK_LOCAL_DIR) is found and used for its cluster):
  --reports-table <name>   the backend's report table (default: VOLHOOK_REPORTS_TABLE)
  --reports-dir <path>     the backend's report directory (default: VOLHOOK_REPORTS_DIR)
  --region <region>        the disks' region (default: the registration's)
  --grace <duration>       audit: how old an orphan must be, e.g. 0s, 30m, 1h (default:
                           the registration's audit.graceSeconds, else 1h)
  --delete                 audit: delete the provably orphaned disks (in two audits: the
                           first marks them, a later one after a new report deletes them)
  --delete-snapshots       audit: likewise the provably orphaned snapshots
  --volume <vol-…>         audit --delete: only this disk, even one whose last PV had
                           reclaimPolicy Retain (kept otherwise); repeatable
  --snapshot <snap-…>      audit --delete-snapshots: likewise for snapshots whose last
                           content had deletionPolicy Retain; repeatable
  --json                   audit: print the result as JSON instead of a table
  --delete-volumes         remove: delete the disks the cluster leaves behind
  --yes                    remove: do not ask (needed when stdin is not a terminal)

adopt options (AWS credentials: the SDK's default chain; endpoint: AWS_ENDPOINT_URL_EC2):
  --pvs <file>             the PVs, as "kubectl get pv -o json" prints them
  --kubeconfig <path>      read the PVs from the cluster (default: KUBECONFIG, ~/.kube/config)
  --context <name>         kubeconfig context (default: the current one)
  --region <region>        the disks' region (default: the registration's)
  --apply                  tag the disks (default: print what would be tagged, change nothing)
  --json                   print the result as JSON instead of a table
`;

type OptionKind = 'value' | 'flag' | 'repeat';
const COMMON: Record<string, OptionKind> = { '--file': 'value', '--ssm-path': 'value', '--ssm-region': 'value' };
const PER_COMMAND: Record<string, Record<string, OptionKind>> = {
  add: {
    '--region': 'value',
    '--zones': 'value',
    '--types': 'value',
    '--max-size-gib': 'value',
    '--tag': 'repeat',
    '--write-back': 'value',
    '--kube-server': 'value',
    '--kube-token-file': 'value',
    '--kube-ca-file': 'value',
  },
  'rotate-secret': { '--finish': 'flag' },
  'remove-old-secrets': {},
  remove: { '--delete-volumes': 'flag', '--yes': 'flag', '--region': 'value', '--reports-table': 'value', '--reports-dir': 'value' },
  audit: {
    '--region': 'value',
    '--reports-table': 'value',
    '--reports-dir': 'value',
    '--grace': 'value',
    '--delete': 'flag',
    '--delete-snapshots': 'flag',
    '--volume': 'repeat',
    '--snapshot': 'repeat',
    '--json': 'flag',
  },
  show: { '--show-secrets': 'flag' },
  adopt: {
    '--pvs': 'value',
    '--kubeconfig': 'value',
    '--context': 'value',
    '--region': 'value',
    '--apply': 'flag',
    '--json': 'flag',
  },
};

/** Every option of every command, as `parseArgs` reads them; which command takes which is checked after. */
const PARSE_OPTIONS = Object.fromEntries(
  Object.entries({ ...COMMON, ...Object.assign({}, ...Object.values(PER_COMMAND)) } as Record<string, OptionKind>).map(([name, kind]) => [
    name.slice(2),
    { type: kind === 'flag' ? ('boolean' as const) : ('string' as const), multiple: true },
  ]),
);

interface RawOptions {
  values: Map<string, string>;
  flags: Set<string>;
  repeats: Map<string, string[]>;
}

export function parseClusterArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): ClusterCommand {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return { command: 'help' };
  const allowed = PER_COMMAND[command];
  if (!allowed) throw new UsageError(`unknown command "${command}"; expected one of ${Object.keys(PER_COMMAND).join(', ')}`);

  const { positionals, options } = readArgs(command, rest, { ...COMMON, ...allowed });
  const [clusterId, ...extra] = positionals;
  if (clusterId === undefined) throw new UsageError(`${command} needs a cluster id: npm run cluster -- ${command} <cluster-id>`);
  const id = ClusterIdSchema.safeParse(clusterId);
  if (!id.success) throw new UsageError(`cluster id "${clusterId}": ${z.prettifyError(id.error)}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" (only one cluster id per command)`);

  const target = readTarget(options);
  switch (command) {
    case 'add':
      return { command, clusterId, target, settings: readSettings(options, env) };
    case 'rotate-secret':
      return { command, clusterId, target, finish: options.flags.has('--finish') };
    case 'remove-old-secrets':
      return { command: 'rotate-secret', clusterId, target, finish: true };
    case 'remove': {
      const deleteVolumes = options.flags.has('--delete-volumes');
      const stray = ['--yes', '--region', '--reports-table', '--reports-dir'].find((o) => options.flags.has(o) || options.values.has(o));
      if (!deleteVolumes && stray) throw new UsageError(`${stray} only applies with --delete-volumes`);
      const region = options.values.get('--region');
      const reports = readReports(options);
      return {
        command,
        clusterId,
        target,
        targetGiven: targetGiven(options),
        deleteVolumes,
        yes: options.flags.has('--yes'),
        ...(region !== undefined && { region: checkRegion('--region', region) }),
        ...(reports && { reports }),
      };
    }
    case 'audit': {
      const region = options.values.get('--region');
      const grace = options.values.get('--grace');
      const reports = readReports(options);
      const del = options.flags.has('--delete');
      const deleteSnapshots = options.flags.has('--delete-snapshots');
      const volumes = readIds(options, '--volume', '--delete', del, /^vol-[0-9a-f]+$/);
      const snapshots = readIds(options, '--snapshot', '--delete-snapshots', deleteSnapshots, /^snap-[0-9a-f]+$/);
      return {
        command,
        clusterId,
        target,
        targetGiven: targetGiven(options),
        ...(region !== undefined && { region: checkRegion('--region', region) }),
        ...(reports && { reports }),
        ...(grace !== undefined && { graceMs: parseDuration('--grace', grace) }),
        delete: del,
        deleteSnapshots,
        ...(volumes && { volumes }),
        ...(snapshots && { snapshots }),
        json: options.flags.has('--json'),
      };
    }
    case 'adopt':
      return readAdopt(clusterId, target, options);
    default:
      return { command: 'show', clusterId, target, showSecrets: options.flags.has('--show-secrets') };
  }
}

/** The IDs of a repeated `option` (`--volume vol-…`), each of the `shape` EC2 gives them; only with `needs`. */
function readIds(options: RawOptions, option: string, needs: string, given: boolean, shape: RegExp): string[] | undefined {
  const ids = options.repeats.get(option);
  if (!ids) return undefined;
  if (!given) throw new UsageError(`${option} only applies with ${needs}: it names what to delete`);
  const bad = ids.find((id) => !shape.test(id));
  if (bad !== undefined) throw new UsageError(`${option} "${bad.slice(0, 80)}": not an EC2 ${option === '--volume' ? 'volume ID (vol-…)' : 'snapshot ID (snap-…)'}`);
  return [...new Set(ids)];
}

/** `parseArgs` over the arguments after the command; then which options apply to it, and given once. */
function readArgs(command: string, args: readonly string[], allowed: Record<string, OptionKind>): { positionals: string[]; options: RawOptions } {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: PARSE_OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(parseArgsProblem(err));
  }
  const options: RawOptions = { values: new Map(), flags: new Set(), repeats: new Map() };
  for (const [key, given] of Object.entries(parsed.values)) {
    const name = `--${key}`;
    const kind = allowed[name];
    if (!kind) {
      const elsewhere = Object.keys(PER_COMMAND).filter((c) => PER_COMMAND[c]![name]);
      throw new UsageError(`${name} does not apply to ${command} (only to ${elsewhere.join(', ')})`);
    }
    if (kind === 'flag') {
      options.flags.add(name);
      continue;
    }
    const values = given as string[];
    if (values.includes('')) throw new UsageError(`${name} needs a value`);
    if (kind === 'repeat') options.repeats.set(name, values);
    else if (values.length > 1) throw new UsageError(`${name} is given twice`);
    else options.values.set(name, values[0]!);
  }
  return { positionals: parsed.positionals, options };
}

/** `parseArgs`' refusal, said the way the other usage errors are: the option first. */
function parseArgsProblem(err: unknown): string {
  const { code, message } = err as { code?: string; message?: string };
  const option = /'(-[^' ]+)/.exec(message ?? '')?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) return `unknown option ${option}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) {
    return message?.includes('does not take an argument') ? `${option} takes no value` : `${option} needs a value`;
  }
  return message ?? String(err);
}

function readTarget(options: RawOptions): RegistryTarget {
  const file = options.values.get('--file');
  const ssmPath = options.values.get('--ssm-path');
  const ssmRegion = options.values.get('--ssm-region');
  if (file !== undefined && ssmPath !== undefined) throw new UsageError('--file and --ssm-path exclude each other: pick one registry');
  if (ssmPath === undefined) {
    if (ssmRegion !== undefined) throw new UsageError('--ssm-region only applies with --ssm-path');
    return { kind: 'file', path: file ?? DEFAULT_REGISTRY_FILE };
  }
  let path: string;
  try {
    path = normalizeSsmPath(ssmPath);
  } catch (err) {
    throw new UsageError(`--ssm-path: ${(err as Error).message}`);
  }
  if (ssmRegion !== undefined) checkRegion('--ssm-region', ssmRegion);
  return ssmRegion === undefined ? { kind: 'ssm', path } : { kind: 'ssm', path, region: ssmRegion };
}

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;

function checkRegion(option: string, region: string): string {
  if (!REGION.test(region)) throw new UsageError(`${option}: "${region}" is not an AWS region like us-east-1`);
  return region;
}

function readSettings(options: RawOptions, env: NodeJS.ProcessEnv): RegistrationSettings {
  const given = options.values.get('--region');
  const fallback = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (given === undefined && !fallback) throw new UsageError('--region is required (or set AWS_REGION): the region the cluster runs in');
  const region = given === undefined ? checkRegion('AWS_REGION', fallback!) : checkRegion('--region', given);
  const settings: RegistrationSettings = { region };

  const zones = options.values.get('--zones');
  if (zones !== undefined) {
    settings.allowedZones = list('--zones', zones).map((zone) => {
      if (!zone.startsWith(region) || !/^[a-z0-9-]+[a-z]$/.test(zone) || zone === region) {
        throw new UsageError(`--zones: "${zone}" is not a zone of ${region}`);
      }
      return zone;
    });
  }

  const types = options.values.get('--types');
  if (types !== undefined) {
    settings.allowedVolumeTypes = list('--types', types).map((type) => {
      if (!isVolumeType(type)) throw new UsageError(`--types: "${type}" is not one of ${VOLUME_TYPES.join(', ')}`);
      return type;
    });
  }

  const maxSize = options.values.get('--max-size-gib');
  if (maxSize !== undefined) {
    const n = Number(maxSize);
    if (!/^\d+$/.test(maxSize) || n < 1 || n > MAX_VOLUME_SIZE_GIB) throw new UsageError(`--max-size-gib: "${maxSize}" is not a whole number from 1 to ${MAX_VOLUME_SIZE_GIB}`);
    settings.maxSizeGiB = n;
  }

  const tags = options.repeats.get('--tag');
  if (tags) settings.extraTags = readTags(tags);

  const writeBack = options.values.get('--write-back');
  if (writeBack !== undefined && writeBack !== 'forwarder' && writeBack !== 'direct') {
    throw new UsageError(`--write-back: "${writeBack}" is neither forwarder nor direct`);
  }
  const server = options.values.get('--kube-server');
  const tokenFile = options.values.get('--kube-token-file');
  const caFile = options.values.get('--kube-ca-file');
  if (writeBack === 'direct') {
    if (server === undefined) throw new UsageError('--kube-server is required with --write-back direct: the backend applies writes to that API server');
    if (!URL.canParse(server) || !/^https?:$/.test(new URL(server).protocol)) throw new UsageError(`--kube-server: "${server}" is not an http(s) URL`);
    settings.writeBack = 'direct';
    settings.kubernetes = { server, ...(tokenFile ? { tokenFile } : {}), ...(caFile ? { caFile } : {}) };
  } else {
    const stray = [server && '--kube-server', tokenFile && '--kube-token-file', caFile && '--kube-ca-file'].find(Boolean);
    if (stray) throw new UsageError(`${stray} only applies with --write-back direct`);
    if (writeBack) settings.writeBack = writeBack;
  }
  return settings;
}

function readAdopt(clusterId: string, target: RegistryTarget, options: RawOptions): AdoptCommand {
  const pvs = options.values.get('--pvs');
  const kubeconfig = options.values.get('--kubeconfig');
  const context = options.values.get('--context');
  if (pvs !== undefined && (kubeconfig !== undefined || context !== undefined)) {
    throw new UsageError(`--pvs and ${kubeconfig !== undefined ? '--kubeconfig' : '--context'} exclude each other: read the PVs from a file or from the cluster`);
  }
  const source: PvSource =
    pvs !== undefined
      ? { kind: 'file', path: pvs }
      : { kind: 'cluster', ...(kubeconfig !== undefined && { kubeconfig }), ...(context !== undefined && { context }) };
  const region = options.values.get('--region');
  return {
    command: 'adopt',
    clusterId,
    target,
    source,
    ...(region !== undefined && { region: checkRegion('--region', region) }),
    apply: options.flags.has('--apply'),
    json: options.flags.has('--json'),
  };
}

function targetGiven(options: RawOptions): boolean {
  return options.values.has('--file') || options.values.has('--ssm-path');
}

function readReports(options: RawOptions): ReportsTarget | undefined {
  const table = options.values.get('--reports-table');
  const dir = options.values.get('--reports-dir');
  if (table !== undefined && dir !== undefined) throw new UsageError('--reports-table and --reports-dir exclude each other: pick one');
  if (table !== undefined) return { kind: 'table', name: table };
  return dir === undefined ? undefined : { kind: 'dir', path: dir };
}

/** `0s`, `90s`, `30m`, `1h`, `1h30m`, `2d` → milliseconds; anything else is refused, naming the option. */
export function parseDuration(option: string, value: string): number {
  const match = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(value);
  if (!match || value === '') throw new UsageError(`${option}: "${value}" is not a duration like 0s, 30m, 1h or 1h30m`);
  const [, d, h, m, sec] = match.map((part) => Number(part ?? 0));
  return ((((d ?? 0) * 24 + (h ?? 0)) * 60 + (m ?? 0)) * 60 + (sec ?? 0)) * 1000;
}

function list(option: string, value: string): string[] {
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new UsageError(`${option}: "${value}" has an empty entry`);
  return [...new Set(items)];
}

function readTags(tags: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const tag of tags) {
    const eq = tag.indexOf('=');
    if (eq <= 0) throw new UsageError(`--tag: "${tag}" is not key=value`);
    const key = tag.slice(0, eq);
    const value = tag.slice(eq + 1);
    if (key.length > 128 || value.length > 256) throw new UsageError(`--tag: "${key}" is too long (keys ≤ 128, values ≤ 256 characters)`);
    if (isReservedTagKey(key)) throw new UsageError(`--tag: "${key}" is reserved (${RESERVED_TAG_KEYS_TEXT})`);
    if (Object.hasOwn(out, key)) throw new UsageError(`--tag: "${key}" is given twice`);
    out[key] = value;
  }
  return out;
}
