/**
 * `npm run cluster -- release <id>`: hands a cluster back to the EBS CSI controller. It lists
 * what volhook leaves on the cluster — its own marks on the storage objects, the forwarder, the
 * registration — checks the EBS objects are as external-provisioner and external-attacher
 * expect them, and with --apply removes the marks, makes the safe fixes, and deregisters the
 * cluster. A dry run unless --apply; the exit code is the same either way: 1 when --apply
 * refuses (a forwarder may be running, a claim's disk may still land, the kubeconfig names
 * another cluster) or a write failed, else 0.
 *
 * It makes no EC2 call at all: it has no EC2 client. Every decision rests on one read of the
 * cluster (release-plan.ts); --apply carries out exactly the plan's writes, reads the cluster
 * again to see the marks gone and no forwarder back, and only then removes the registration.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { describeError } from '../kube/index.js';
import { parseRegistration } from '../registry/file-registry.js';
import type { ReleaseCommand } from './args.js';
import { EXIT } from './exit.js';
import { judgeForwarder } from './release-forwarder.js';
import { applyEach, readClusterView, readForwarderEvidence } from './release-kube.js';
import { markKey, planMarks } from './release-marks.js';
import { fixKey, heldRefusal, planRelease, type ReleasePlan } from './release-plan.js';
import { releaseJson, releaseSummary, releaseTable, type FindingRow, type MarkRow, type ReleaseReport } from './release-report.js';
import { checkForSidecars } from './release-checks.js';
import { backendHeardRefusal, type BackendHeard } from './release-backend.js';
import type { RegistrationStore } from './stores.js';

export interface ReleaseIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The Kubernetes calls release makes (release-kube.ts); a test hands in its own. */
export interface ReleaseKube {
  readClusterView: typeof readClusterView;
  readForwarderEvidence: typeof readForwarderEvidence;
  applyEach: typeof applyEach;
}

const KUBE: ReleaseKube = { readClusterView, readForwarderEvidence, applyEach };

/** What the backend last heard from the cluster (release-backend.ts), read when --apply asks. */
export type BackendHeardReader = () => Promise<BackendHeard>;

export async function runRelease(command: ReleaseCommand, kc: KubeConfig, store: RegistrationStore, io: ReleaseIo, kube: ReleaseKube = KUBE, heard?: BackendHeardReader, now: () => number = Date.now): Promise<number> {
  const { clusterId } = command;
  const server = kc.getCurrentCluster()?.server ?? 'the cluster';
  const where = store.describe(clusterId);
  const raw = await store.read(clusterId);
  const registration = raw === undefined ? undefined : parseRegistration(clusterId, raw);

  let plan: ReleasePlan;
  try {
    const [view, evidence] = await Promise.all([kube.readClusterView(kc), kube.readForwarderEvidence(kc)]);
    plan = planRelease({ clusterId, view, evidence, ...(registration && { writeBack: registration.writeBack }) });
  } catch (err) {
    io.stderr(`error: reading the cluster at ${server}: ${describeError(err)}; nothing was changed\n`);
    return EXIT.failed;
  }

  const report: ReleaseReport = {
    clusterId,
    applied: false,
    server,
    marks: plan.marks.map((m) => ({ ...m, status: 'remove' })),
    held: plan.held,
    findings: plan.findings.map((f) => ({ ...f, status: f.fix ? 'fix' : 'report' })),
    forwarder: { seen: plan.forwarder.seen, uninstall: plan.forwarder.uninstall },
    registration: { where, status: registration ? 'remove' : 'not-registered' },
    refusals: plan.refusals,
  };
  if (command.apply && registration) {
    let refusal: string | undefined;
    try {
      refusal = backendHeardRefusal(heard ? await heard() : { known: false, why: 'no report store given' }, now());
    } catch (err) {
      refusal = `reading what the backend last heard from the cluster: ${(err as Error).message}`;
    }
    if (refusal) report.refusals.push(refusal);
  }
  if (command.apply && report.refusals.length === 0) await apply(kc, kube, plan, report, store, registration?.writeBack, async () => (heard ? backendHeardRefusal(await heard(), now()) : undefined));
  else if (registration) report.registration.status = command.apply ? 'kept' : 'remove';

  io.stdout(command.json ? releaseJson(report) : releaseTable(report));
  io.stderr(releaseSummary(report, command.apply));
  const failed = report.marks.some((m) => m.status === 'failed') || report.findings.some((f) => f.status === 'failed');
  return report.refusals.length > 0 || failed ? EXIT.failed : EXIT.ok;
}

/** Carries out the plan's writes, checks them against a second read, then deregisters; fills `report` in. */
async function apply(
  kc: KubeConfig,
  kube: ReleaseKube,
  plan: ReleasePlan,
  report: ReleaseReport,
  store: RegistrationStore,
  writeBack: 'forwarder' | 'direct' | undefined,
  heardAgain: () => Promise<string | undefined>,
): Promise<void> {
  report.applied = true;
  const failures = await kube.applyEach(kc, plan.writes);
  const markRows: MarkRow[] = plan.marks.map((mark, n) => (failures.has(n) ? { ...mark, status: 'failed', detail: failures.get(n)! } : { ...mark, status: 'removed' }));
  let n = plan.marks.length;
  const findingRows: FindingRow[] = plan.findings.map((finding) => {
    if (!finding.fix) return { ...finding, status: 'report' };
    const error = failures.get(n++);
    return error === undefined ? { ...finding, status: 'fixed' } : { ...finding, status: 'failed', detail: error };
  });

  // The second read: a mark back (or never gone) or a fix undone means something still writes;
  // a claim held now (made, or being provisioned, since the first read) may still get its disk.
  try {
    const [view, evidence] = await Promise.all([kube.readClusterView(kc), kube.readForwarderEvidence(kc)]);
    const again = planMarks(view);
    const present = new Set(again.marks.map(markKey));
    report.held.push(...again.held.filter((claim) => !report.held.some((h) => h.uid === claim.uid)));
    report.refusals.push(...again.held.map((claim) => `after the writes: ${heldRefusal(claim)}`));
    const unfixed = new Set(checkForSidecars(view).map(fixKey).filter((k) => k !== undefined));
    for (const row of markRows) if (row.status === 'removed' && present.has(markKey(row))) Object.assign(row, { status: 'failed', detail: 'still there when read again' });
    for (const row of findingRows) if (row.status === 'fixed' && unfixed.has(fixKey(row) ?? '')) Object.assign(row, { status: 'failed', detail: 'not so when read again' });
    const since = judgeForwarder(evidence, report.clusterId, writeBack).refusals;
    report.refusals.push(...since.map((refusal) => `after the writes: ${refusal}`));
  } catch (err) {
    report.refusals.push(`reading the cluster again after the writes: ${describeError(err)}`);
  }
  // And the backend again, right before deregistering: a forwarder may have sent meanwhile.
  try {
    const refusal = await heardAgain();
    if (refusal) report.refusals.push(`after the writes: ${refusal}`);
  } catch (err) {
    report.refusals.push(`reading what the backend last heard from the cluster after the writes: ${(err as Error).message}`);
  }
  report.marks = markRows;
  report.findings = findingRows;

  const clean = report.refusals.length === 0 && [...markRows, ...findingRows].every((row) => row.status !== 'failed');
  if (report.registration.status !== 'remove') return;
  if (!clean) {
    report.registration = { ...report.registration, status: 'kept', detail: 'kept: not everything above is done' };
    return;
  }
  try {
    report.registration.status = (await store.delete(report.clusterId)) ? 'removed' : 'not-registered';
  } catch (err) {
    report.registration = { ...report.registration, status: 'kept', detail: `kept: removing it failed: ${(err as Error).message}` };
    report.refusals.push(`the registration could not be removed (${(err as Error).message}); run release again`);
  }
}
