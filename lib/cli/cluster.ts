/**
 * `npm run cluster -- …`: registers clusters with the backend, adopts a cluster's existing
 * disks (adopt.ts), audits them and removes a cluster with its disks (audit.ts), and hands a
 * cluster back to the EBS CSI controller (release.ts). Runs in-process (tests) or from
 * bin/cluster.ts; returns the exit code: 0 done (and --help), 1 refused or failed (nothing
 * registered, AWS error, a disk left unadopted, a release refused), 2 bad arguments, none, or
 * an unusable new secret (nothing read or written).
 *
 * The forwarder's Secret goes to stdout (`npm run -s cluster -- add c1 … | kubectl apply -f -`),
 * everything meant for a person to stderr, progress lines (progress.ts) among it. With neither
 * --file nor --ssm-path, every command uses a running local stack for its own cluster
 * (local-stack.ts).
 */
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { KubeConfig } from '@kubernetes/client-node';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { STSClient } from '@aws-sdk/client-sts';
import { checkWebhookSecret, secretFingerprint } from '../contract/signing.js';
import type { Ec2ClientOptions } from '../ec2/client.js';
import { RegistrationError } from '../registry/registration.js';
import { openPvSource, runAdopt, type OpenedPvSource } from './adopt.js';
import { loadKubeConfig } from './adopt-pvs.js';
import { runRelease } from './release.js';
import { reportsFromEnv, reportStoreFor, runAuditCommand, runRemoveWithVolumes } from './audit.js';
import { readBackendHeard } from './release-backend.js';
import { finishRefusal } from './rotation-finish.js';
import type { BackendHeardReader } from './release.js';
import { createFileReportStore } from '../reports/index.js';
import { NoCommandError, parseClusterArgs, UsageError, type ClusterCommand, type RegistrationSettings, type ReleaseCommand, type SetCommand } from './args.js';
import { addSecret, keepNewestSecret, newRegistration, readStored, type KubeCredentials, type StoredRegistration } from './edits.js';
import { applyChange, ChangeRefused, registrationDiff } from './registration-change.js';
import { EXIT } from './exit.js';
import { installSteps } from './install-line.js';
import { forwarderSecretManifest, generateSecret, redactSecret } from './secrets.js';
import { AlreadyRegisteredError, storeFor, type RegistrationStore } from './stores.js';
import type { ProgressTimer } from './progress.js';
import { findLocalStack, localKubeConfig, registryTargetFor, type LocalStackDescriptor } from './local-stack.js';
import { commandUsage, usageHint, USAGE } from './usage.js';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env?: NodeJS.ProcessEnv;
  /** Secret generator; tests may fix it. */
  generateSecret?(): string;
  /** SSM client factory; tests mock it. */
  ssmClient?(region?: string): SSMClient;
  /**
   * EC2 client factory for `adopt` and `audit`; tests point it at the simulator. Default: the
   * SDK's default chain. `credentials` (audit, teardown): the cluster session's provider when a
   * role applies; undefined: the operator's default chain.
   */
  ec2Client?(region: string, endpoint?: string, credentials?: Ec2ClientOptions['credentials']): EC2Client;
  /** STS client for a cluster's session (audit, teardown); tests mock it. Default: one with the operator's credentials. */
  stsClient?(): STSClient;
  /** Where every command looks for a running local stack's `.volhook/local`; default the working directory. */
  cwd?: string;
  /** stdin is a terminal: `remove --delete-volumes` may ask for a confirmation. */
  interactive?: boolean;
  ask?(question: string): Promise<string>;
  /** The clock and timer of the progress lines of remove --delete-volumes, audit and adopt; tests simulate it. */
  progressTimer?: ProgressTimer;
}

export { EXIT } from './exit.js';

export async function runClusterCli(argv: readonly string[], io: CliIo): Promise<number> {
  let command: ClusterCommand;
  let kube: KubeCredentials = {};
  let pvSource: OpenedPvSource | undefined;
  let kubeConfig: KubeConfig | undefined;
  let local: LocalStackDescriptor | undefined;
  try {
    command = parseClusterArgs(argv, io.env ?? {});
    if (command.command === 'help') {
      io.stdout(command.topic ? commandUsage(command.topic) : USAGE);
      return EXIT.ok;
    }
    local = await findLocalStack(command, io);
    if (command.command === 'add') kube = await readKubeCredentials(command.settings);
    if (command.command === 'adopt') pvSource = await openPvSource(command.source, local);
    if (command.command === 'release') kubeConfig = local && !command.kube.kubeconfig && !command.kube.context ? localKubeConfig(local) : loadKubeConfig({ kind: 'cluster', ...command.kube });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(err instanceof NoCommandError ? `${err.message}\n` : `error: ${err.message}\n${usageHint(argv)}\n`);
    return EXIT.usage;
  }

  // A new secret is made and checked before any registry is touched: one whose key is not
  // 24–64 bytes is never written (the registry would refuse the whole registration).
  let secret: string | undefined;
  if (command.command === 'add' || (command.command === 'rotate-secret' && !command.finish)) {
    secret = (io.generateSecret ?? generateSecret)();
    const checked = checkWebhookSecret(secret);
    if ('problem' in checked) {
      io.stderr(`error: refusing to register the new secret of cluster "${command.clusterId}": ${checked.problem}\n`);
      return EXIT.usage;
    }
  }

  if (command.command === 'audit' || (command.command === 'remove' && command.deleteVolumes)) {
    try {
      return command.command === 'audit' ? await runAuditCommand(command, io) : await runRemoveWithVolumes(command, io);
    } catch (err) {
      const name = err instanceof Error ? err.name : 'Error';
      io.stderr(`error: ${command.command} ${command.clusterId}: ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
      return EXIT.failed;
    }
  }

  const store = storeFor(registryTargetFor(command.target, local), io.ssmClient);
  try {
    if (command.command === 'adopt') return await runAdopt(command, pvSource!, store, io, local);
    if (command.command === 'release') return await runRelease(command, kubeConfig!, store, io, undefined, backendHeardReader(command, local, io.env ?? {}));
    return await execute(command, store, secret, kube, io, local);
  } catch (err) {
    if (err instanceof RegistrationError || err instanceof AlreadyRegisteredError) {
      io.stderr(`error: ${err.message}\n`);
      return EXIT.failed;
    }
    const name = err instanceof Error ? err.name : 'Error';
    io.stderr(`error: ${store.describe(command.clusterId)}: ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failed;
  }
}

async function execute(
  command: Exclude<ClusterCommand, { command: 'help' | 'adopt' | 'audit' | 'release' }>,
  store: RegistrationStore,
  newSecret: string | undefined,
  kube: KubeCredentials,
  io: CliIo,
  local: LocalStackDescriptor | undefined,
): Promise<number> {
  const { clusterId } = command;
  const where = store.describe(clusterId);

  if (command.command === 'add') {
    const secret = required(newSecret);
    await store.create(clusterId, newRegistration(clusterId, command.settings, secret, kube));
    io.stderr(`registered cluster "${clusterId}" in ${where}${local && local.clusterId !== clusterId ? `, the registry of the running local stack (npm start), whose backend serves it from now on` : ''}.\n`);
    io.stderr(attachFenceLine(command.settings.aws?.nodeTag));
    io.stdout(forwarderSecretManifest(clusterId, secret));
    io.stderr(installSteps({ clusterId, ...(command.apiUrl !== undefined && { backendUrl: command.apiUrl }) }));
    return EXIT.ok;
  }

  if (command.command === 'remove') {
    if (!(await store.delete(clusterId))) {
      io.stderr(`error: cluster "${clusterId}" is not registered in ${where}\n`);
      return EXIT.failed;
    }
    io.stderr(`removed cluster "${clusterId}" from ${where}; its requests now get 404.\n`);
    return EXIT.ok;
  }

  const raw = await store.read(clusterId);
  if (raw === undefined) {
    io.stderr(`error: cluster "${clusterId}" is not registered in ${where}\n`);
    return EXIT.failed;
  }
  const stored = readStored(clusterId, raw);

  if (command.command === 'show') {
    const shown = command.showSecrets ? stored : { ...stored, secrets: stored.secrets.map(redactSecret) };
    io.stdout(`${JSON.stringify(shown, null, 2)}\n`);
    return EXIT.ok;
  }

  if (command.command === 'set') return await runSet(command, stored, raw, store, io);

  if (command.finish) {
    if (stored.secrets.length === 1) {
      io.stderr(`cluster "${clusterId}" already has a single secret (${redactSecret(stored.secrets[0]!)}); nothing to finish.\n`);
      return EXIT.ok;
    }
    const kept = keepNewestSecret(stored);
    const refusal = await finishRefusalOf(command, local, io.env ?? {}, stored, kept);
    if (refusal) {
      io.stderr(`error: refusing to remove the older secrets of cluster "${clusterId}": ${refusal}\n`);
      return EXIT.failed;
    }
    await store.replace(clusterId, kept);
    io.stderr(
      `cluster "${clusterId}" now accepts only its newest secret (${redactSecret(kept.secrets[0]!)}); ` +
        `${stored.secrets.length - 1} older secret(s) removed from ${where}.\n`,
    );
    return EXIT.ok;
  }

  const secret = required(newSecret);
  await store.replace(clusterId, addSecret(stored, secret));
  io.stderr(
    `added a secret to cluster "${clusterId}" in ${where}; old and new are both accepted. Its fingerprint: ${secretFingerprint(secret)}.\n` +
      `Apply this Secret in the cluster and wait until every forwarder replica signs with it: its metric volhook_forwarder_signing_secret_info{fingerprint="${secretFingerprint(secret)}"} is 1 ` +
      `(and its /readyz answers with the header x-volhook-signing-secret: ${secretFingerprint(secret)}); then run: npm run cluster -- rotate-secret ${clusterId} --finish\n`,
  );
  io.stdout(forwarderSecretManifest(clusterId, secret));
  return EXIT.ok;
}

function required(secret: string | undefined): string {
  if (secret === undefined) throw new Error('internal: no new secret was made for this command');
  return secret;
}

/** Reads --kube-token-file / --kube-ca-file; an unreadable file is a usage error, before anything is written. */
async function readKubeCredentials(settings: RegistrationSettings): Promise<KubeCredentials> {
  const kube = settings.kubernetes;
  if (!kube) return {};
  const read = async (option: string, path: string) => {
    try {
      return await readFile(path, 'utf8');
    } catch (err) {
      throw new UsageError(`${option}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
  };
  const credentials: KubeCredentials = {};
  if (kube.tokenFile) credentials.token = (await read('--kube-token-file', kube.tokenFile)).trim();
  if (kube.caFile) credentials.caData = Buffer.from(await read('--kube-ca-file', kube.caFile), 'utf8').toString('base64');
  return credentials;
}

/** What `add` registered of the attach fence, for the person who must tag the nodes so. */
export function attachFenceLine(nodeTag: { key: string; value: string } | undefined): string {
  if (!nodeTag) return 'attaches are NOT fenced (--unfenced): the cluster\'s session may attach its disks to any instance of the account.\n';
  return `attaches are fenced to the instances tagged ${nodeTag.key}=${nodeTag.value} (EKS tags its nodes eks:cluster-name=<EKS cluster name>; if that is not "${nodeTag.value}", add again with --node-tag ${nodeTag.key}=<name>).\n`;
}

/**
 * `set`: the change applied and shown as a diff, then written in one replace of the whole
 * registration, only if the registration still is what was read (a rotation meanwhile would
 * otherwise lose a secret). Refused changes write nothing.
 */
async function runSet(command: SetCommand, stored: StoredRegistration, raw: unknown, store: RegistrationStore, io: CliIo): Promise<number> {
  const { clusterId } = command;
  let next: StoredRegistration;
  try {
    next = applyChange(clusterId, stored, command.change);
  } catch (err) {
    if (!(err instanceof ChangeRefused)) throw err;
    io.stderr(`error: set ${clusterId}: ${err.message}; nothing written.\n`);
    return EXIT.failed;
  }
  const diff = registrationDiff(stored, next);
  if (diff.length === 0) {
    io.stderr(`cluster "${clusterId}" already has these settings; nothing written.\n`);
    return EXIT.ok;
  }
  io.stdout(diff.map((line) => `${line}\n`).join(''));
  if (command.dryRun) {
    io.stderr('dry run: nothing written.\n');
    return EXIT.ok;
  }
  if (!isDeepStrictEqual(await store.read(clusterId), raw)) {
    io.stderr(`error: set ${clusterId}: the registration changed while this ran (a rotation?); nothing written. Run set again.\n`);
    return EXIT.failed;
  }
  await store.replace(clusterId, next);
  io.stderr(`updated cluster "${clusterId}" in ${store.describe(clusterId)}; secrets unchanged. The backend reads it within 60 s.\n`);
  return EXIT.ok;
}

/** Where release reads what the backend last heard: the store given, the environment's, or the running local stack's. */
/**
 * Why --finish must not remove the older secrets now (lib/cli/rotation-finish.ts), read from the
 * backend's report store: --reports-table/--reports-dir, VOLHOOK_REPORTS_TABLE, or the running
 * local stack's. No store to read: refused, the evidence is not known.
 */
async function finishRefusalOf(
  command: Extract<ClusterCommand, { command: 'rotate-secret' }>,
  local: LocalStackDescriptor | undefined,
  env: NodeJS.ProcessEnv,
  stored: StoredRegistration,
  kept: StoredRegistration,
): Promise<string | undefined> {
  const target = command.reports ?? reportsFromEnv(env) ?? (local ? { kind: 'dir' as const, path: local.reportsDir } : undefined);
  if (!target) {
    return 'cannot tell whether a forwarder still signs with one of them: give --reports-table <volhook-<stage>-reports> (or --reports-dir for a local backend), or set VOLHOOK_REPORTS_TABLE';
  }
  const where = target.kind === 'table' ? `table ${target.name}` : `directory ${target.path}`;
  const verifiedBy = await (target.kind === 'dir' ? createFileReportStore(target.path) : reportStoreFor(target)).verifiedBy(command.clusterId);
  const removed = stored.secrets.filter((s) => !kept.secrets.includes(s)).map(secretFingerprint);
  return finishRefusal(removed, verifiedBy, Date.now(), where, secretFingerprint(kept.secrets[0]!));
}

function backendHeardReader(command: ReleaseCommand, local: LocalStackDescriptor | undefined, env: NodeJS.ProcessEnv): BackendHeardReader | undefined {
  const target = command.reports ?? reportsFromEnv(env) ?? (local ? { kind: 'dir' as const, path: local.reportsDir } : undefined);
  if (!target) return undefined;
  const where = target.kind === 'table' ? `table ${target.name}` : `directory ${target.path}`;
  return () => readBackendHeard(target.kind === 'dir' ? createFileReportStore(target.path) : reportStoreFor(target), where, command.clusterId);
}
