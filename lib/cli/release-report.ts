/**
 * What `cluster release` prints: tables for a person, or JSON for a script (`--json`), both on
 * stdout; the summary, refusals and next steps go to stderr with the CLI's other messages.
 */
import type { ForwarderVerdict } from './release-forwarder.js';
import { objectName, type HeldClaim, type Mark } from './release-marks.js';
import type { Finding } from './release-checks.js';

export type MarkStatus = 'remove' | 'removed' | 'failed';
export type FindingStatus = 'fix' | 'fixed' | 'failed' | 'report';
export type RegistrationStatus = 'remove' | 'removed' | 'kept' | 'not-registered';

export interface MarkRow extends Mark {
  status: MarkStatus;
  detail?: string;
}

export interface FindingRow extends Finding {
  status: FindingStatus;
  detail?: string;
}

export interface ReleaseReport {
  clusterId: string;
  /** false: a dry run, or --apply refused; nothing was changed. */
  applied: boolean;
  /** The API server, as the kubeconfig names it. */
  server: string;
  marks: MarkRow[];
  held: HeldClaim[];
  findings: FindingRow[];
  forwarder: Pick<ForwarderVerdict, 'seen' | 'uninstall'>;
  registration: { where: string; status: RegistrationStatus; detail?: string };
  /** Why --apply did not (or would not) act, or stopped short of deregistering. */
  refusals: string[];
}

const MARK_ACTION: Record<MarkStatus, string> = { remove: 'would remove', removed: 'removed', failed: 'FAILED' };
const FINDING_ACTION: Record<FindingStatus, string> = { fix: 'would fix', fixed: 'fixed', failed: 'FAILED', report: 'reported' };
const REGISTRATION_ACTION: Record<RegistrationStatus, string> = {
  remove: 'would remove, once the marks are gone',
  removed: 'removed',
  kept: 'kept',
  'not-registered': 'not registered: nothing to remove',
};

const REGISTRATION_SHORT: Record<RegistrationStatus, string> = { remove: 'to remove', removed: 'removed', kept: 'kept', 'not-registered': 'not found' };

export function releaseTable(report: ReleaseReport): string {
  const sections: string[] = [];
  sections.push(
    report.marks.length === 0
      ? "volhook's marks: none\n"
      : `volhook's marks:\n${table(
          ['KIND', 'OBJECT', 'MARK', 'ACTION', 'WHY / DETAIL'],
          report.marks.map((m) => [m.target.kind, objectName(m.target), `${m.type} ${m.key}`, MARK_ACTION[m.status], m.detail ?? m.why]),
        )}`,
  );
  if (report.held.length > 0) {
    sections.push(`claims whose finalizer must stay (--apply refuses):\n${table(['CLAIM', 'WHY'], report.held.map((c) => [`${c.namespace}/${c.name}`, c.why]))}`);
  }
  sections.push(
    report.findings.length === 0
      ? "what the EBS CSI controller's sidecars expect: all as they expect\n"
      : `what the EBS CSI controller's sidecars expect, and is not so:\n${table(
          ['KIND', 'OBJECT', 'PROBLEM', 'ACTION'],
          report.findings.map((f) => [f.target.kind, objectName(f.target), f.problem, `${FINDING_ACTION[f.status]}: ${f.detail ?? f.action}`]),
        )}`,
  );
  sections.push(
    `the forwarder:\n${report.forwarder.seen.map((line) => `  ${line}\n`).join('')}  to uninstall it:\n${report.forwarder.uninstall.map((line) => `    ${line}\n`).join('')}`,
  );
  sections.push(`registration: ${report.registration.where}: ${report.registration.detail ?? REGISTRATION_ACTION[report.registration.status]}\n`);
  return sections.join('\n');
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, n) => Math.max(h.length, ...rows.map((r) => r[n]!.length)));
  const line = (cells: string[]) => cells.map((c, n) => (n === cells.length - 1 ? c : c.padEnd(widths[n]!))).join('  ').trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}

export function releaseJson(report: ReleaseReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** For stderr: what happened, why not, and what comes next. */
export function releaseSummary(report: ReleaseReport, apply: boolean): string {
  const count = <T extends { status: string }>(rows: readonly T[], status: T['status']) => rows.filter((r) => r.status === status).length;
  const marks = apply && report.applied ? `${count(report.marks, 'removed')} mark(s) removed` : `${report.marks.length} mark(s) to remove`;
  const failedMarks = count(report.marks, 'failed');
  const fixes = apply && report.applied ? `${count(report.findings, 'fixed')} fixed` : `${count(report.findings, 'fix')} to fix`;
  const failedFixes = count(report.findings, 'failed');
  const lines = [
    `cluster "${report.clusterId}" (${report.server}): ${marks}${failedMarks ? `, ${failedMarks} FAILED` : ''}; ` +
      `${report.findings.length} finding(s) for the CSI sidecars, ${fixes}${failedFixes ? `, ${failedFixes} FAILED` : ''}; ` +
      `registration ${REGISTRATION_SHORT[report.registration.status]}.`,
  ];
  for (const refusal of report.refusals) lines.push(`refused: ${refusal}`);
  const done = report.refusals.length === 0 && failedMarks + failedFixes === 0 && report.registration.status !== 'kept';
  if (!apply) lines.push(report.refusals.length ? 'dry run: nothing was changed; --apply would refuse.' : 'dry run: nothing was changed; run again with --apply to release.');
  else if (!report.applied) lines.push('--apply refused: nothing was changed.');
  else if (done) lines.push('released: volhook has left the cluster. Next: turn the EBS CSI controller on again (docs/deploy.md, "Hand back to the EBS CSI controller").');
  else lines.push('the registration is kept; run release again once the above is dealt with.');
  return `${lines.join('\n')}\n`;
}
