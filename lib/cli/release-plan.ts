/**
 * What `cluster release` does, decided purely from one read of the cluster and the
 * registration: the marks to remove (release-marks.ts), the fixes and findings for the CSI
 * sidecars (release-checks.ts), the verdict on the forwarder (release-forwarder.ts), and
 * every reason --apply must not act. A dry run prints this plan; --apply carries out exactly
 * its writes, and only when it has no refusal.
 */
import type { Write } from '../contract/index.js';
import { checkForSidecars, type Finding } from './release-checks.js';
import { judgeForwarder, type ForwarderVerdict } from './release-forwarder.js';
import { planMarks, removal, type HeldClaim, type Mark } from './release-marks.js';
import type { ClusterView, ForwarderEvidence } from './release-view.js';

export interface ReleasePlan {
  marks: Mark[];
  held: HeldClaim[];
  findings: Finding[];
  forwarder: ForwarderVerdict;
  /** Why --apply must not act; empty: it may. */
  refusals: string[];
  /** What --apply writes, in order: the marks' removals, then the fixes. */
  writes: Write[];
}

export interface ReleaseInput {
  clusterId: string;
  view: ClusterView;
  /** Every forwarder found (or one). */
  evidence: ForwarderEvidence | readonly ForwarderEvidence[];
  /** The registration's, when there is one. */
  writeBack?: 'forwarder' | 'direct';
}

/** Pure: the plan for releasing the cluster. */
export function planRelease({ clusterId, view, evidence, writeBack }: ReleaseInput): ReleasePlan {
  const { marks, held } = planMarks(view);
  const findings = checkForSidecars(view);
  const forwarder = judgeForwarder(evidence, clusterId, writeBack);
  const refusals = [
    ...forwarder.refusals,
    ...held.map(heldRefusal),
  ];
  const writes = [...marks.map(removal), ...findings.flatMap((f) => (f.fix ? [f.fix] : []))];
  return { marks, held, findings, forwarder, refusals, writes };
}

/** Why --apply must not deregister while `claim` is held: its disk may still land. */
export function heldRefusal(claim: HeldClaim): string {
  return `claim ${claim.namespace}/${claim.name}: ${claim.why}; run the forwarder until volhook settles it (it writes the PV, or deletes the disk, and drops its finalizer), stop it, and release again`;
}

/** Identifies a finding's fix across two reads of the cluster. */
export function fixKey(finding: Finding): string | undefined {
  const { fix } = finding;
  if (!fix || (fix.op !== 'addFinalizer' && fix.op !== 'setAnnotation')) return undefined;
  return `${fix.target.kind}/${fix.target.uid ?? ''}/${fix.op === 'addFinalizer' ? fix.finalizer : fix.key}`;
}
