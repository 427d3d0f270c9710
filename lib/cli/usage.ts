/**
 * The cluster CLI's commands and their options, declared once: args.ts parses with this table
 * and the help is printed from it, so an option the parser takes is always in its command's help.
 */
import { DEFAULT_REGISTRY_FILE } from '../registry/file-registry.js';

export type OptionKind = 'value' | 'flag' | 'repeat';

export interface OptionSpec {
  kind: OptionKind;
  /** The value's placeholder in the help, e.g. `<region>`. */
  arg?: string;
  /** Its help; a line break starts an indented continuation line. */
  help: string;
}

interface CommandSpec {
  /** Forms of the command and what each does, as the command list shows them. */
  synopsis: Array<[form: string, does: string]>;
  /** Said below the command's options, e.g. where its AWS credentials come from. */
  note?: string;
  options: Record<string, OptionSpec>;
}

/** The registry file the local stack and `npm run offline` use: the registry's own default. */
export { DEFAULT_REGISTRY_FILE };

/** Every command takes these: where the registration is. */
export const REGISTRY_OPTIONS: Record<string, OptionSpec> = {
  '--file': { kind: 'value', arg: '<path>', help: 'a local registry file (the local stack, npm run offline)' },
  '--ssm-path': { kind: 'value', arg: '<path>', help: 'SSM Parameter Store, e.g. /volhook/dev/clusters/' },
  '--ssm-region': { kind: 'value', arg: '<region>', help: 'region of that SSM (default: AWS_REGION / the AWS config)' },
};

const DISKS_REGION: OptionSpec = { kind: 'value', arg: '<region>', help: "the disks' region (default: the registration's)" };
const REPORTS_TABLE: OptionSpec = { kind: 'value', arg: '<name>', help: "the backend's report table (default: VOLHOOK_REPORTS_TABLE)" };
const REPORTS_DIR: OptionSpec = { kind: 'value', arg: '<path>', help: "the backend's report directory (default: VOLHOOK_REPORTS_DIR)" };
const AUDIT_NOTE =
  "AWS credentials: the SDK's default chain; endpoint: AWS_ENDPOINT_URL_EC2. When the registration\n" +
  'names aws.roleArn (or VOLHOOK_EC2_ROLE_ARN is set), they assume that role as the backend does\n' +
  "(session tags, ExternalId; STS endpoint: AWS_ENDPOINT_URL_STS), so the role's trust policy must\n" +
  'allow them; otherwise they call EC2 directly.';

export const COMMANDS = {
  add: {
    synopsis: [['add <id>', "register a cluster with a new secret; prints the forwarder's Secret"]],
    options: {
      '--region': { kind: 'value', arg: '<region>', help: "the cluster's AWS region (default: AWS_REGION)" },
      '--zones': { kind: 'value', arg: 'a,b', help: 'zones volumes may be created in (default: any)' },
      '--types': { kind: 'value', arg: 'gp3,io2', help: 'volume types the cluster may use (default: all)' },
      '--max-size-gib': { kind: 'value', arg: '<n>', help: 'largest volume (default: 16384)' },
      '--tag': { kind: 'repeat', arg: 'k=v', help: 'extra tag on every volume; repeatable' },
      '--write-back': { kind: 'value', arg: 'forwarder|direct', help: 'who applies the Kubernetes writes (default: forwarder)' },
      '--kube-server': { kind: 'value', arg: '<url>', help: "with --write-back direct: the cluster's API server" },
      '--kube-token-file': { kind: 'value', arg: '<path>', help: 'with --write-back direct: a bearer token for it' },
      '--kube-ca-file': { kind: 'value', arg: '<path>', help: 'with --write-back direct: its CA certificate (PEM)' },
      '--role-arn': { kind: 'value', arg: '<arn>', help: "the EC2 role the backend assumes for this cluster (default:\nthe deployment's, VOLHOOK_EC2_ROLE_ARN); e.g. a role in the\ncluster's own account, arn:aws:iam::<account>:role/volhook/<name>" },
      '--external-id': { kind: 'value', arg: '<id>', help: "the ExternalId that role's trust policy requires" },
      '--node-tag': { kind: 'value', arg: 'key=value', help: 'the tag the cluster\'s instances carry (EKS: eks:cluster-name=<name>):\nattaches are fenced to them; key: VOLHOOK_NODE_TAG_KEY\n(default eks:cluster-name); default value: the cluster id' },
      '--unfenced': { kind: 'flag', help: 'no attach fence: the cluster\'s session may attach its disks to any\ninstance of the account (not the default)' },
      '--api-url': { kind: 'value', arg: '<url>', help: "the backend's URL (HttpApiUrl from osls info), for the helm\ninstall line printed after; not stored" },
    },
  },
  set: {
    synopsis: [['set <id>', "change a registration's limits, tags or audit settings; prints the diff; secrets untouched"]],
    options: {
      '--max-size-gib': { kind: 'value', arg: '<n>', help: 'largest volume' },
      '--zones': { kind: 'value', arg: 'a,b', help: "zones volumes may be created in (of the registration's region);\n'any' for every zone" },
      '--types': { kind: 'value', arg: 'gp3,io2', help: 'volume types the cluster may use' },
      '--tag': { kind: 'repeat', arg: 'k=v', help: 'the extra tags on every new volume, replacing those registered; repeatable' },
      '--no-tags': { kind: 'flag', help: 'no extra tags' },
      '--audit-delete-orphans': { kind: 'value', arg: 'true|false', help: 'whether the scheduled audit deletes orphaned disks' },
      '--audit-delete-orphaned-snapshots': { kind: 'value', arg: 'true|false', help: 'whether it deletes orphaned snapshots' },
      '--audit-grace-seconds': { kind: 'value', arg: '<n>', help: 'how old a disk or snapshot must be to count as an orphan' },
      '--dry-run': { kind: 'flag', help: 'print the diff, write nothing' },
    },
  },
  'rotate-secret': {
    synopsis: [
      ['rotate-secret <id>', 'add a new secret (old and new both accepted); prints the Secret'],
      ['rotate-secret <id> --finish', 'keep only the newest secret'],
    ],
    note: '--finish refuses while the backend verified a request of the cluster with a secret it\nwould remove in the last 600 s (--reports-table).',
    options: {
      '--finish': { kind: 'flag', help: 'keep only the newest secret (after the forwarder uses it)' },
      '--reports-table': REPORTS_TABLE,
      '--reports-dir': REPORTS_DIR,
    },
  },
  'remove-old-secrets': {
    synopsis: [['remove-old-secrets <id>', 'keep only the newest secret (rotate-secret <id> --finish)']],
    options: { '--reports-table': REPORTS_TABLE, '--reports-dir': REPORTS_DIR },
  },
  remove: {
    synopsis: [
      ['remove <id>', 'delete the registration'],
      ['remove <id> --delete-volumes', 'also list the disks the cluster leaves behind and delete them\nafter a confirmation (--yes for scripts)'],
    ],
    note: `--yes, --region, --reports-table and --reports-dir only apply with --delete-volumes.\n${AUDIT_NOTE}`,
    options: {
      '--delete-volumes': { kind: 'flag', help: 'delete the disks the cluster leaves behind' },
      '--yes': { kind: 'flag', help: 'do not ask (needed when stdin is not a terminal)' },
      '--region': DISKS_REGION,
      '--reports-table': REPORTS_TABLE,
      '--reports-dir': REPORTS_DIR,
    },
  },
  audit: {
    synopsis: [
      [
        'audit <id>',
        'orphaned, lost and drifted disks of the cluster, with their size\nand monthly cost; every audit, with --delete or not, marks the\nprovably orphaned ones; ' +
          '--delete removes those marked by an earlier audit\nthat a report received since still does not name',
      ],
    ],
    note: AUDIT_NOTE,
    options: {
      '--reports-table': REPORTS_TABLE,
      '--reports-dir': REPORTS_DIR,
      '--region': DISKS_REGION,
      '--grace': { kind: 'value', arg: '<duration>', help: "how old an orphan must be, e.g. 0s, 30m, 1h (default:\nthe registration's audit.graceSeconds, else 1h)" },
      '--delete': { kind: 'flag', help: 'delete the provably orphaned disks marked by an earlier audit\n(any audit marks them) and not named by a report received since' },
      '--delete-snapshots': { kind: 'flag', help: 'likewise the provably orphaned snapshots' },
      '--volume': { kind: 'repeat', arg: '<vol-…>', help: 'with --delete: only this disk, even one whose last PV had\nreclaimPolicy Retain (kept otherwise); repeatable' },
      '--snapshot': { kind: 'repeat', arg: '<snap-…>', help: 'with --delete-snapshots: likewise for snapshots whose last\ncontent had deletionPolicy Retain; repeatable' },
      '--json': { kind: 'flag', help: 'print the result as JSON instead of a table' },
    },
  },
  show: {
    synopsis: [['show <id>', 'print the registration (secrets redacted unless --show-secrets)']],
    options: { '--show-secrets': { kind: 'flag', help: 'print the secrets too' } },
  },
  adopt: {
    synopsis: [['adopt <id>', "tag the disks of the cluster's EBS PersistentVolumes so volhook owns\nthem (disks the EBS CSI controller made), and the cluster's disks and\nsnapshots without volhook.io/cluster; a dry run unless --apply"]],
    note: "AWS credentials: the SDK's default chain; endpoint: AWS_ENDPOINT_URL_EC2.",
    options: {
      '--pvs': { kind: 'value', arg: '<file>', help: 'the PVs, as "kubectl get pv -o json" prints them' },
      '--kubeconfig': { kind: 'value', arg: '<path>', help: 'read the PVs from the cluster (default: KUBECONFIG, ~/.kube/config)' },
      '--context': { kind: 'value', arg: '<name>', help: 'kubeconfig context (default: the current one)' },
      '--region': DISKS_REGION,
      '--apply': { kind: 'flag', help: 'tag the disks (default: print what would be tagged, change nothing)' },
      '--json': { kind: 'flag', help: 'print the result as JSON instead of a table' },
    },
  },
  release: {
    synopsis: [
      [
        'release <id>',
        "hand the cluster back to the EBS CSI controller: list volhook's marks\non its objects, the forwarder and the registration, and check the\nEBS objects are as the CSI sidecars expect; --apply removes the marks,\nmakes the safe fixes and deregisters (no EC2 call); a dry run unless --apply",
      ],
    ],
    note: '--apply refuses while a forwarder may be running (its Lease renewed within its\nduration by the API server\'s clock, its Deployment or pods) or a claim volhook\nis provisioning could still get a disk: uninstall the forwarder first; and while\nthe backend heard from the cluster in the last 600 s (--reports-table).',
    options: {
      '--kubeconfig': { kind: 'value', arg: '<path>', help: 'the cluster (default: KUBECONFIG, ~/.kube/config)' },
      '--context': { kind: 'value', arg: '<name>', help: 'kubeconfig context (default: the current one)' },
      '--apply': { kind: 'flag', help: 'remove the marks, fix, deregister (default: print what would be\ndone, change nothing); refused while the backend heard from the\ncluster in the last 600 s' },
      '--reports-table': { kind: 'value', arg: '<name>', help: "the backend's report table (volhook-<stage>-reports; default:\nVOLHOOK_REPORTS_TABLE): what it last heard from the cluster" },
      '--reports-dir': { kind: 'value', arg: '<dir>', help: "a local backend's reports directory (default: VOLHOOK_REPORTS_DIR,\nor the running local stack's)" },
      '--json': { kind: 'flag', help: 'print the result as JSON instead of tables' },
    },
  },
} satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;
export const COMMAND_NAMES = Object.keys(COMMANDS) as CommandName[];

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

const COLUMN = 27;

/** `  <left>   <text>`, the text in one column; a line break in it continues in that column. */
function row(left: string, text: string): string {
  const [first, ...more] = text.split('\n');
  const head = left.length + 3 <= COLUMN ? `  ${left.padEnd(COLUMN - 2)}${first}` : `  ${left}\n${' '.repeat(COLUMN)}${first}`;
  return [head, ...more.map((line) => `${' '.repeat(COLUMN)}${line}`)].join('\n');
}

function optionRows(options: Record<string, OptionSpec>): string {
  return Object.entries(options)
    .map(([name, spec]) => row(spec.arg ? `${name} ${spec.arg}` : name, spec.help))
    .join('\n');
}

const REGISTRY_SECTION =
  `where (one of; default --file ${DEFAULT_REGISTRY_FILE}):\n${optionRows(REGISTRY_OPTIONS)}\n` +
  '  With neither --file nor --ssm-path, a running npm start (its .volhook/local, or\n' +
  '  VOLHOOK_LOCAL_DIR) is used for its own cluster: its registry file, EC2 simulator and\n' +
  '  Kubernetes API, by every command.\n';

function synopsisRows(command: CommandName): string {
  return (COMMANDS[command].synopsis as CommandSpec['synopsis']).map(([form, does]) => row(form, does)).join('\n');
}

function optionsSection(command: CommandName, heading: string): string {
  const spec: CommandSpec = COMMANDS[command];
  if (Object.keys(spec.options).length === 0) return '';
  const note = spec.note ? `\n${spec.note.split('\n').map((line) => `  ${line}`).join('\n')}\n` : '';
  return `${heading}:\n${optionRows(spec.options)}\n${note}`;
}

/** `npm run cluster -- <command> --help`: the command's forms, its options and the registry's. */
export function commandUsage(command: CommandName): string {
  return [
    `usage: npm run cluster -- ${command} <cluster-id> [options]\n\n${synopsisRows(command)}\n`,
    optionsSection(command, 'options'),
    REGISTRY_SECTION,
  ]
    .filter(Boolean)
    .join('\n');
}

/** `npm run cluster -- --help`: every command's section. */
export const USAGE = [
  'usage: npm run cluster -- <command> <cluster-id> [options]\n' + "       npm run cluster -- <command> --help    (that command's options)\n",
  `commands:\n${COMMAND_NAMES.map(synopsisRows).join('\n')}\n`,
  REGISTRY_SECTION,
  ...COMMAND_NAMES.map((command) => optionsSection(command, `${command} options`)).filter(Boolean),
].join('\n');

/** Printed, alone, when no command is given. */
export const SHORT_USAGE = `usage: npm run cluster -- <command> [options]; commands: ${COMMAND_NAMES.join(', ')}; --help for more`;

/**
 * The line after an argument error: that command's usage in one line, naming the options it
 * takes (their help is behind --help); for an unknown command, the list of commands.
 */
export function usageHint(argv: readonly string[]): string {
  const command = argv[0];
  if (command === undefined || !isCommandName(command)) return SHORT_USAGE;
  const options = [...Object.keys(COMMANDS[command].options), ...Object.keys(REGISTRY_OPTIONS)];
  return `usage: npm run cluster -- ${command} <cluster-id> [${options.join('] [')}]; more: npm run cluster -- ${command} --help`;
}
