/**
 * Parses `npm run cluster -- <command> <id> [options]` into a command, purely: no files are
 * read and nothing is written here, so a bad argument can never leave a half-done change.
 * Every refusal is a UsageError whose message names the argument.
 */
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { isReservedTagKey, RESERVED_TAG_KEYS_TEXT } from '../contract/tags.js';
import { AwsSettingsSchema, nodeTagProblem, type AwsSettings } from '../registry/aws.js';
import { nodeTagKeyFrom } from '../registry/node-tag-key.js';
import { ClusterIdSchema, type ClusterRegistrationInput } from '../registry/registration.js';
import { normalizeSsmPath } from '../registry/ssm-registry.js';
import { isVolumeType, MAX_VOLUME_SIZE_GIB, VOLUME_TYPES } from '../storageclass/volume-types.js';
import { COMMAND_NAMES, COMMANDS, DEFAULT_REGISTRY_FILE, isCommandName, REGISTRY_OPTIONS, SHORT_USAGE, type CommandName, type OptionKind, type OptionSpec } from './usage.js';

export { DEFAULT_REGISTRY_FILE, USAGE } from './usage.js';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** No command at all: its message is the one-line usage. */
export class NoCommandError extends UsageError {
  constructor() {
    super(SHORT_USAGE);
  }
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
  /** `apiUrl`: the backend's URL, only for the install line printed after. */
  | { command: 'add'; clusterId: string; target: RegistryTarget; targetGiven: boolean; settings: RegistrationSettings; apiUrl?: string }
  /** `reports`: where the backend records which secrets verified the cluster's requests (--finish reads it). */
  | { command: 'rotate-secret'; clusterId: string; target: RegistryTarget; targetGiven: boolean; finish: boolean; reports?: ReportsTarget }
  | SetCommand
  | RemoveCommand
  | AuditCommand
  | { command: 'show'; clusterId: string; target: RegistryTarget; targetGiven: boolean; showSecrets: boolean }
  | AdoptCommand
  | ReleaseCommand
  /** `--help`: the full usage, or with `topic` that command's own. */
  | { command: 'help'; topic?: CommandName };

/**
 * `set`: the settings to change, each checked as `add` checks it; zones against the
 * registration's region once it is read (registration-change.ts).
 */
export interface RegistrationChange {
  maxSizeGiB?: number;
  /** Empty: any zone of the region. */
  allowedZones?: string[];
  allowedVolumeTypes?: RegistrationSettings['allowedVolumeTypes'];
  extraTags?: Record<string, string>;
  audit?: { deleteOrphans?: boolean; deleteOrphanedSnapshots?: boolean; graceSeconds?: number };
}

export interface SetCommand {
  command: 'set';
  clusterId: string;
  target: RegistryTarget;
  targetGiven: boolean;
  change: RegistrationChange;
  dryRun: boolean;
}

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
  /** --file or --ssm-path was given: no looking for a running local stack. */
  targetGiven: boolean;
  source: PvSource;
  /** The disks' region; default: the registration's. */
  region?: string;
  /** Tag; without it, only say what would be tagged. */
  apply: boolean;
  json: boolean;
}

/** The cluster `release` works on: the current kubeconfig context, or the one named. */
export interface KubeTarget {
  kubeconfig?: string;
  context?: string;
}

export interface ReleaseCommand {
  command: 'release';
  clusterId: string;
  target: RegistryTarget;
  targetGiven: boolean;
  kube: KubeTarget;
  /** Where the backend keeps what it last heard from the cluster (--reports-table, --reports-dir). */
  reports?: ReportsTarget;
  /** Remove the marks and the registration; without it, only say what would be done. */
  apply: boolean;
  json: boolean;
}

const COMMON: Record<string, OptionKind> = kinds(REGISTRY_OPTIONS);
const PER_COMMAND: Record<CommandName, Record<string, OptionKind>> = Object.fromEntries(
  COMMAND_NAMES.map((name) => [name, kinds(COMMANDS[name].options)]),
) as Record<CommandName, Record<string, OptionKind>>;

function kinds(options: Record<string, OptionSpec>): Record<string, OptionKind> {
  return Object.fromEntries(Object.entries(options).map(([name, spec]) => [name, spec.kind]));
}

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
  if (command === undefined) throw new NoCommandError();
  if (command === '--help' || command === '-h') return { command: 'help' };
  if (command === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { command: 'help' };
    if (!isCommandName(topic)) throw unknownCommand(topic);
    return { command: 'help', topic };
  }
  if (!isCommandName(command)) throw unknownCommand(command);
  if (asksForHelp(rest)) return { command: 'help', topic: command };
  const allowed = PER_COMMAND[command];

  const { positionals, options } = readArgs(command, rest, { ...COMMON, ...allowed });
  const [clusterId, ...extra] = positionals;
  if (clusterId === undefined) throw new UsageError(`${command} needs a cluster id: npm run cluster -- ${command} <cluster-id>`);
  const id = ClusterIdSchema.safeParse(clusterId);
  if (!id.success) throw new UsageError(`cluster id "${clusterId}": ${z.prettifyError(id.error)}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" (only one cluster id per command)`);

  const target = readTarget(options);
  switch (command) {
    case 'add': {
      const apiUrl = options.values.get('--api-url');
      if (apiUrl !== undefined && (!URL.canParse(apiUrl) || !/^https?:$/.test(new URL(apiUrl).protocol))) {
        throw new UsageError(`--api-url: "${apiUrl}" is not an http(s) URL (the HttpApiUrl osls info prints)`);
      }
      return { command, clusterId, target, targetGiven: targetGiven(options), settings: readSettings(clusterId, options, env), ...(apiUrl !== undefined && { apiUrl }) };
    }
    case 'set':
      return { command, clusterId, target, targetGiven: targetGiven(options), change: readChange(options), dryRun: options.flags.has('--dry-run') };
    case 'rotate-secret': {
      const finish = options.flags.has('--finish');
      const stray = ['--reports-table', '--reports-dir'].find((o) => options.values.has(o));
      if (!finish && stray) throw new UsageError(`${stray} only applies with --finish`);
      return { command, clusterId, target, targetGiven: targetGiven(options), finish, ...withReports(readReports(options)) };
    }
    case 'remove-old-secrets':
      return { command: 'rotate-secret', clusterId, target, targetGiven: targetGiven(options), finish: true, ...withReports(readReports(options)) };
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
    case 'release': {
      const kubeconfig = options.values.get('--kubeconfig');
      const context = options.values.get('--context');
      return {
        command,
        clusterId,
        target,
        targetGiven: targetGiven(options),
        kube: { ...(kubeconfig !== undefined && { kubeconfig }), ...(context !== undefined && { context }) },
        ...withReports(readReports(options)),
        apply: options.flags.has('--apply'),
        json: options.flags.has('--json'),
      };
    }
    default:
      return { command: 'show', clusterId, target, targetGiven: targetGiven(options), showSecrets: options.flags.has('--show-secrets') };
  }
}

function unknownCommand(command: string): UsageError {
  return new UsageError(`unknown command "${command}"; expected one of ${COMMAND_NAMES.join(', ')}`);
}

/** `--help` or `-h` given as an option (not as the value of one, nor after `--`). */
function asksForHelp(args: readonly string[]): boolean {
  const { tokens } = parseArgs({ args: [...args], options: { ...PARSE_OPTIONS, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: false, tokens: true });
  return tokens.some((token) => token.kind === 'option' && token.name === 'help');
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
      const elsewhere = COMMAND_NAMES.filter((c) => PER_COMMAND[c][name]);
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

function readSettings(clusterId: string, options: RawOptions, env: NodeJS.ProcessEnv): RegistrationSettings {
  const given = options.values.get('--region');
  const fallback = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (given === undefined && !fallback) throw new UsageError('--region is required (or set AWS_REGION): the region the cluster runs in');
  const region = given === undefined ? checkRegion('AWS_REGION', fallback!) : checkRegion('--region', given);
  const settings: RegistrationSettings = { region };

  const zones = options.values.get('--zones');
  if (zones !== undefined) {
    settings.allowedZones = list('--zones', zones).map((zone) => {
      const problem = zoneProblem(zone, region);
      if (problem) throw new UsageError(`--zones: ${problem}`);
      return zone;
    });
  }

  const types = options.values.get('--types');
  if (types !== undefined) settings.allowedVolumeTypes = readTypes(types);

  const maxSize = options.values.get('--max-size-gib');
  if (maxSize !== undefined) settings.maxSizeGiB = readMaxSize(maxSize);

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
  const aws = readAws(clusterId, options, env);
  if (aws) settings.aws = aws;
  return settings;
}

/** The option each field of `aws` comes from, to name it in a refusal. */
const AWS_OPTIONS: Record<keyof AwsSettings, string> = { roleArn: '--role-arn', externalId: '--external-id', nodeTag: '--node-tag' };

/**
 * --role-arn, --external-id, --node-tag: the registration's `aws`, checked by its own schema.
 * Attaches are fenced by default: without --node-tag, to the instances tagged
 * `<VOLHOOK_NODE_TAG_KEY>=<cluster id>` (EKS: `eks:cluster-name`, when the EKS cluster has the
 * registration's name); `--unfenced` registers without a fence, and says so.
 */
function readAws(clusterId: string, options: RawOptions, env: NodeJS.ProcessEnv): AwsSettings | undefined {
  const roleArn = options.values.get('--role-arn');
  const externalId = options.values.get('--external-id');
  const nodeTag = options.values.get('--node-tag');
  const unfenced = options.flags.has('--unfenced');
  if (unfenced && nodeTag !== undefined) throw new UsageError('--unfenced and --node-tag exclude each other: attaches are fenced to the tagged instances, or to none');
  let tag: { key: string; value: string } | undefined;
  if (nodeTag !== undefined) {
    const eq = nodeTag.indexOf('=');
    if (eq <= 0) throw new UsageError(`--node-tag: "${nodeTag}" is not key=value`);
    tag = { key: nodeTag.slice(0, eq), value: nodeTag.slice(eq + 1) };
  } else if (!unfenced) {
    tag = { key: nodeTagKeyFrom(env), value: clusterId };
  }
  if (roleArn === undefined && externalId === undefined && tag === undefined) return undefined;
  const parsed = AwsSettingsSchema.safeParse({
    ...(roleArn !== undefined && { roleArn }),
    ...(externalId !== undefined && { externalId }),
    ...(tag && { nodeTag: tag }),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const option = AWS_OPTIONS[issue.path[0] as keyof AwsSettings] ?? '--role-arn';
    throw new UsageError(`${option}: ${issue.message}`);
  }
  const problem = nodeTagProblem({ clusterId, aws: parsed.data }, nodeTagKeyFrom(env));
  if (problem) throw new UsageError(`--node-tag: ${problem}`);
  return parsed.data;
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
    targetGiven: targetGiven(options),
    source,
    ...(region !== undefined && { region: checkRegion('--region', region) }),
    apply: options.flags.has('--apply'),
    json: options.flags.has('--json'),
  };
}

function targetGiven(options: RawOptions): boolean {
  return options.values.has('--file') || options.values.has('--ssm-path');
}

const withReports = (reports: ReportsTarget | undefined) => (reports ? { reports } : {});

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

/** Why `zone` is no zone of `region` (`add` and `set` alike), or undefined. */
export function zoneProblem(zone: string, region: string): string | undefined {
  if (!zone.startsWith(region) || !/^[a-z0-9-]+[a-z]$/.test(zone) || zone === region) return `"${zone}" is not a zone of ${region}`;
  return undefined;
}

function readTypes(types: string): NonNullable<RegistrationSettings['allowedVolumeTypes']> {
  return list('--types', types).map((type) => {
    if (!isVolumeType(type)) throw new UsageError(`--types: "${type}" is not one of ${VOLUME_TYPES.join(', ')}`);
    return type;
  });
}

function readMaxSize(maxSize: string): number {
  const n = Number(maxSize);
  if (!/^\d+$/.test(maxSize) || n < 1 || n > MAX_VOLUME_SIZE_GIB) throw new UsageError(`--max-size-gib: "${maxSize}" is not a whole number from 1 to ${MAX_VOLUME_SIZE_GIB}`);
  return n;
}

function readBoolean(option: string, value: string): boolean {
  if (value !== 'true' && value !== 'false') throw new UsageError(`${option}: "${value}" is neither true nor false`);
  return value === 'true';
}

/** `set`'s options as a change; at least one must be given. */
function readChange(options: RawOptions): RegistrationChange {
  const change: RegistrationChange = {};
  const maxSize = options.values.get('--max-size-gib');
  if (maxSize !== undefined) change.maxSizeGiB = readMaxSize(maxSize);
  const zones = options.values.get('--zones');
  if (zones !== undefined) change.allowedZones = zones === 'any' ? [] : list('--zones', zones);
  const types = options.values.get('--types');
  if (types !== undefined) change.allowedVolumeTypes = readTypes(types);
  const tags = options.repeats.get('--tag');
  if (tags && options.flags.has('--no-tags')) throw new UsageError('--tag and --no-tags exclude each other');
  if (tags) change.extraTags = readTags(tags);
  if (options.flags.has('--no-tags')) change.extraTags = {};
  const audit: NonNullable<RegistrationChange['audit']> = {};
  const orphans = options.values.get('--audit-delete-orphans');
  if (orphans !== undefined) audit.deleteOrphans = readBoolean('--audit-delete-orphans', orphans);
  const snapshots = options.values.get('--audit-delete-orphaned-snapshots');
  if (snapshots !== undefined) audit.deleteOrphanedSnapshots = readBoolean('--audit-delete-orphaned-snapshots', snapshots);
  const grace = options.values.get('--audit-grace-seconds');
  if (grace !== undefined) {
    if (!/^\d+$/.test(grace) || !Number.isSafeInteger(Number(grace))) throw new UsageError(`--audit-grace-seconds: "${grace}" is not a whole number of seconds`);
    audit.graceSeconds = Number(grace);
  }
  if (Object.keys(audit).length > 0) change.audit = audit;
  if (Object.keys(change).length === 0) {
    throw new UsageError('set needs at least one of --max-size-gib, --zones, --types, --tag/--no-tags, --audit-delete-orphans, --audit-delete-orphaned-snapshots, --audit-grace-seconds');
  }
  return change;
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
