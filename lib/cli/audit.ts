/**
 * `npm run cluster -- audit <id>` and `npm run cluster -- remove <id> --delete-volumes`: the
 * audit (lib/audit) run from a terminal, with the operator's AWS credentials, against the
 * backend's report store. When the registration names `aws.roleArn` (or VOLHOOK_EC2_ROLE_ARN
 * names the deployment's role), those credentials assume the cluster's role as the backend does
 * (lib/ec2/sessions.ts: the same session tags and ExternalId), so the role's fences hold for the
 * operator too; otherwise they call EC2 directly. With neither --file nor --ssm-path, a running
 * local stack (`npm start`) is looked for first: its registration, reports and simulator are
 * used for its cluster, so `npm run cluster -- audit local` needs nothing else.
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { SSMClient } from '@aws-sdk/client-ssm';
import type { STSClient } from '@aws-sdk/client-sts';
import {
  auditSummary,
  auditTable,
  type AuditResult,
  DEFAULT_GRACE_MS,
  deleteLeftBehind,
  FRESH_REPORT_MS,
  deleteSnapshotsLeftBehind,
  leftBehind,
  leftBehindTable,
  runAudit,
  snapshotsLeftBehind,
  snapshotsLeftBehindTable,
  type LeftBehind,
  type SnapshotLeftBehind,
} from '../audit/index.js';
import { budgetAccount, createClusterClients, createClusterSessions, createEc2Gateway, type ClusterClients, type Ec2ClientOptions, type Ec2Observer } from '../ec2/index.js';
import { budgetFromEnvironment } from '../budget/from-environment.js';
import { parseRegistration } from '../registry/file-registry.js';
import type { ClusterRegistration } from '../registry/registration.js';
import { createDynamoDbReportStore, createFileReportStore, type ReportStore } from '../reports/index.js';
import type { AuditCommand, RemoveCommand, ReportsTarget } from './args.js';
import { EXIT } from './exit.js';
import { findLocalStack, LOCAL_CREDENTIALS } from './local-stack.js';
import { startProgress, type Progress, type ProgressTimer } from './progress.js';
import { createFileStore, storeFor, type RegistrationStore } from './stores.js';

export interface AuditIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env?: NodeJS.ProcessEnv;
  /** Where `.volhook/local` is looked for; default the process's working directory. */
  cwd?: string;
  ssmClient?(region?: string): SSMClient;
  /**
   * EC2 client factory. `credentials`: the cluster session's provider when a role applies, the
   * local stack's keys for its cluster; undefined: the operator's default chain.
   */
  ec2Client?(region: string, endpoint?: string, credentials?: Ec2ClientOptions['credentials']): EC2Client;
  /** STS client for the cluster's session; tests mock it. Default: one with the operator's credentials. */
  stsClient?(): STSClient;
  /** Whether stdin is a terminal a person can answer on. */
  interactive?: boolean;
  /** Asks a person; resolves to the line typed. Only called when `interactive`. */
  ask?(question: string): Promise<string>;
  /** The progress lines' clock and timer; tests give a simulated one. Default: the system's. */
  progressTimer?: ProgressTimer;
}

/** A registration, its disks' EC2 and its reports, as the command resolved them. */
interface Resolved {
  registration: ClusterRegistration;
  region: string;
  client: EC2Client;
  /** The budget account of the client's calls: its role's, else VOLHOOK_AWS_ACCOUNT. */
  account: string;
  /** The clients made here, closed when the command ends (none when the io made them). */
  clients: ClusterClients | undefined;
  /** The cluster's client for another Region (its snapshot copies), when the clients are made here. */
  clientFor: ((region: string) => EC2Client) | undefined;
  reports: ReportStore;
  /** Where they came from, for messages. */
  source: string;
  registrations: RegistrationStore;
}

class Refusal extends Error {}

async function resolve(command: AuditCommand | RemoveCommand, io: AuditIo): Promise<Resolved> {
  const env = io.env ?? {};
  let registrations: RegistrationStore;
  let endpoint = env.AWS_ENDPOINT_URL_EC2 || env.AWS_ENDPOINT_URL || undefined;
  let stsEndpoint = env.AWS_ENDPOINT_URL_STS || env.AWS_ENDPOINT_URL || undefined;
  let credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  let reports: ReportStore | undefined;
  let source: string;

  const local = await findLocalStack(command, io);
  if (local) {
    registrations = createFileStore(local.registryFile);
    endpoint = local.ec2Endpoint;
    // The simulator serves STS on its EC2 endpoint.
    stsEndpoint = local.ec2Endpoint;
    credentials = { ...LOCAL_CREDENTIALS };
    reports = command.reports ? reportStoreFor(command.reports) : createFileReportStore(local.reportsDir);
    source = `the local stack (${local.registryFile}, EC2 ${local.ec2Endpoint})`;
  } else {
    registrations = storeFor(command.target, io.ssmClient);
    const target = command.reports ?? reportsFromEnv(env);
    if (!target) {
      throw new Refusal(
        'no report store: give --reports-table (the deployed table, volhook-<stage>-reports) or --reports-dir, or set VOLHOOK_REPORTS_TABLE; no local stack runs cluster ' +
          `"${command.clusterId}"`,
      );
    }
    reports = reportStoreFor(target);
    source = registrations.describe(command.clusterId);
  }
  const raw = await registrations.read(command.clusterId);
  if (raw === undefined) throw new Refusal(`cluster "${command.clusterId}" is not registered in ${registrations.describe(command.clusterId)}`);
  const registration = parseRegistration(command.clusterId, raw);
  const region = command.region ?? registration.region;
  const ec2Client = io.ec2Client;
  const clients = createClusterClients({
    sessions: createClusterSessions(
      io.stsClient
        ? { sts: io.stsClient() }
        : { stsClient: { region: env.AWS_REGION || region, ...(stsEndpoint && { endpoint: stsEndpoint }), ...(credentials && { credentials }) } },
    ),
    ...(env.VOLHOOK_EC2_ROLE_ARN?.trim() && { defaultRoleArn: env.VOLHOOK_EC2_ROLE_ARN.trim() }),
    // No role: the operator's credentials call EC2 themselves, as before sessions.
    direct: { ...(credentials && { credentials }), account: budgetAccount(process.env) },
    ...(endpoint && { endpoint }),
    ...(ec2Client && { makeClient: (o) => ec2Client(o.region, o.endpoint, o.credentials) }),
  });
  const ec2 = clients.for({ ...registration, region });
  const clientFor = ec2Client ? undefined : (other: string) => clients.for({ ...registration, region: other }).client;
  return { registration, region, client: ec2.client, account: ec2.account, clients: ec2Client ? undefined : clients, clientFor, reports, source, registrations };
}

export function reportsFromEnv(env: NodeJS.ProcessEnv): ReportsTarget | undefined {
  if (env.VOLHOOK_REPORTS_TABLE?.trim()) return { kind: 'table', name: env.VOLHOOK_REPORTS_TABLE.trim() };
  if (env.VOLHOOK_REPORTS_DIR?.trim()) return { kind: 'dir', path: env.VOLHOOK_REPORTS_DIR.trim() };
  return undefined;
}

export function reportStoreFor(target: ReportsTarget): ReportStore {
  return target.kind === 'table' ? createDynamoDbReportStore({ tableName: target.name }) : createFileReportStore(target.path);
}

async function withResolved(command: AuditCommand | RemoveCommand, io: AuditIo, run: (r: Resolved) => Promise<number>): Promise<number> {
  let resolved: Resolved;
  try {
    resolved = await resolve(command, io);
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    io.stderr(`error: ${err.message}\n`);
    return EXIT.failed;
  }
  try {
    return await run(resolved);
  } finally {
    resolved.clients?.destroy();
  }
}

/**
 * The CLI's calls are paced like the backend's: the budget the environment names (the deployed
 * table when VOLHOOK_BUDGET_TABLE is set, else this process's own), waiting for each token.
 */
function pacedGateway(r: Resolved, clusterId: string, env: NodeJS.ProcessEnv, observer: Ec2Observer) {
  const pacing = { budget: budgetFromEnvironment(env), account: r.account, region: r.region, waitForTokens: true };
  return createEc2Gateway({ client: r.client, clusterId, pacing, observer, ...(r.clientFor && { clientFor: r.clientFor }) });
}

function progressFor(what: string, io: AuditIo): Progress {
  return startProgress({ label: what, write: (line) => io.stderr(`${line}\n`), ...(io.progressTimer && { timer: io.progressTimer }) });
}

export function runAuditCommand(command: AuditCommand, io: AuditIo): Promise<number> {
  return withResolved(command, io, async (r) => {
    const progress = progressFor(`audit ${command.clusterId}`, io);
    const graceMs = command.graceMs ?? (r.registration.audit?.graceSeconds !== undefined ? r.registration.audit.graceSeconds * 1000 : DEFAULT_GRACE_MS);
    let result: AuditResult;
    try {
      result = await runAudit({
        clusterId: command.clusterId,
        region: r.region,
        gateway: pacedGateway(r, command.clusterId, io.env ?? process.env, { call: () => progress.call() }),
      reports: r.reports,
        graceMs,
        delete: command.delete,
        deleteSnapshots: command.deleteSnapshots,
        ...(command.volumes && { volumes: command.volumes }),
        ...(command.snapshots && { snapshots: command.snapshots }),
      });
    } finally {
      progress.finish();
    }
    io.stdout(command.json ? `${JSON.stringify(result, null, 2)}\n` : auditTable(result));
    io.stderr(auditSummary(result));
    const deletable = [...result.orphans, ...result.orphanedSnapshots].filter((o) => o.deletable);
    const due = deletable.filter((o) => o.mark?.due).length;
    if (!command.delete && due > 0) io.stderr(`${due} orphan(s) can be deleted: run again with --delete.\n`);
    if (deletable.length > due) {
      io.stderr(`${deletable.length - due} orphan(s) marked, not yet deletable: an audit with --delete deletes them once a report received after the mark still names nothing of them, while the latest report is at most ${FRESH_REPORT_MS / 1000} s old and no request of the cluster was refused since.\n`);
    }
    return [...result.deletions, ...result.snapshotDeletions].some((d) => d.outcome === 'failed') ? EXIT.failed : EXIT.ok;
  });
}

/**
 * Lists what the cluster leaves behind, asks, deletes the disks that may go, then removes the
 * registration. Without --yes and without a terminal to ask on, nothing is deleted.
 */
export function runRemoveWithVolumes(command: RemoveCommand, io: AuditIo): Promise<number> {
  return withResolved(command, io, async (r) => {
    const label = `remove ${command.clusterId}`;
    // One reporter for the whole run; when a person is asked, it stops and a new one starts
    // after the answer, so none writes over the question.
    let progress = progressFor(label, io);
    const gateway = pacedGateway(r, command.clusterId, io.env ?? process.env, {
      call(action, outcome) {
        progress.call();
        if ((action === 'DeleteVolume' || action === 'DeleteSnapshot') && outcome.code === undefined) progress.step();
      },
    });
    const evidence = { clusterId: command.clusterId, report: await r.reports.get(command.clusterId), retained: await r.reports.retained(command.clusterId) };
    let entries: LeftBehind[];
    let snapshots: SnapshotLeftBehind[];
    try {
      entries = leftBehind(await gateway.listClusterDisks(), evidence, r.region);
      snapshots = snapshotsLeftBehind(await gateway.listClusterSnapshots(), evidence, r.region);
    } catch (err) {
      progress.finish();
      throw err;
    }
    const toDelete = entries.filter((e) => e.action === 'delete');
    const snapshotsToDelete = snapshots.filter((e) => e.action === 'delete');
    io.stdout(leftBehindTable(entries));
    io.stdout(snapshotsLeftBehindTable(snapshots));
    io.stderr(
      `cluster "${command.clusterId}" (${r.region}, ${r.source}) leaves ${entries.length} disk(s) and ${snapshots.length} snapshot(s) behind; ${toDelete.length} disk(s) and ${snapshotsToDelete.length} snapshot(s) to delete.\n`,
    );
    const what = `${toDelete.length} disk(s) and ${snapshotsToDelete.length} snapshot(s)`;

    if (toDelete.length + snapshotsToDelete.length > 0 && !command.yes) {
      progress.finish();
      if (!io.interactive || !io.ask) {
        io.stderr(`error: refusing to delete ${what} without a confirmation: stdin is not a terminal. Run again with --yes to delete them. Nothing was deleted; the registration is kept.\n`);
        return EXIT.failed;
      }
      const answer = (await io.ask(`Delete these ${what} and the registration of cluster "${command.clusterId}"? Type the cluster id to confirm: `)).trim();
      if (answer !== command.clusterId) {
        io.stderr('not confirmed: nothing was deleted; the registration is kept.\n');
        return EXIT.failed;
      }
      progress = progressFor(label, io);
    }
    progress.goal(toDelete.length + snapshotsToDelete.length, 'disk(s) and snapshot(s) deleted');
    let outcomes: Awaited<ReturnType<typeof deleteLeftBehind>>;
    let snapshotOutcomes: Awaited<ReturnType<typeof deleteSnapshotsLeftBehind>>;
    try {
      outcomes = await deleteLeftBehind(gateway, command.clusterId, entries, evidence);
      snapshotOutcomes = await deleteSnapshotsLeftBehind(gateway, command.clusterId, snapshots, evidence);
    } finally {
      progress.finish();
    }
    const deleted = outcomes.filter((o) => o.outcome === 'deleted').length;
    for (const o of outcomes) if (o.outcome !== 'deleted') io.stderr(`${o.volumeId}: ${o.outcome}: ${o.why}\n`);
    const deletedSnapshots = snapshotOutcomes.filter((o) => o.outcome === 'deleted').length;
    for (const o of snapshotOutcomes) if (o.outcome !== 'deleted') io.stderr(`${o.snapshotId}: ${o.outcome}: ${o.why}\n`);
    const removed = await r.registrations.delete(command.clusterId);
    io.stderr(
      `deleted ${deleted} of ${toDelete.length} disk(s) and ${deletedSnapshots} of ${snapshotsToDelete.length} snapshot(s); ${removed ? 'removed' : 'no'} registration of cluster "${command.clusterId}" from ${r.registrations.describe(command.clusterId)}.\n`,
    );
    return deleted === toDelete.length && deletedSnapshots === snapshotsToDelete.length ? EXIT.ok : EXIT.failed;
  });
}
