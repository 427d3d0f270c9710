/**
 * One randomized lifecycle and the crash points planned for it, both drawn from the run's
 * seed before anything runs.
 *
 * A lifecycle: a few claims, each of a class picked from every combination of Immediate /
 * WaitForFirstConsumer and Delete / Retain; most with a pod, pods deleted fast and made again,
 * some claims deleted early (even in the step they were made, before any forwarder saw them
 * bound). After the active steps the live state must converge (checkpoint), then everything
 * is deleted and the end state must converge (teardown).
 *
 * A minority also meet disks volhook did not make, each named by a static PV (Retain) that a
 * claim is bound to: another cluster's disk, cloned by a claim of this one (refused
 * `SourceNotOwned`, never copied), or a disk of this cluster that is not adopted, used by a pod
 * (refused `NotAdopted`, never touched) — and sometimes adopted by the operator later, after which
 * it must attach. Some have a pod with an inline in-tree volume (a VolumeAttachment with
 * `inlineVolumeSpec`, no PV) on a disk put into EC2 for it. They are drawn after everything
 * else, so a lifecycle without them is drawn exactly as before they existed. So are, last, the
 * deletions of a restore's VolumeSnapshot and a clone's source claim while the new volume may
 * still be being made from them (the source protection's test), and, last of all, a group
 * snapshot: two or three claims used by one pod on one node, a VolumeGroupSnapshot of them (Delete
 * or Retain), sometimes a member restored and the group deleted early — or the claims used on two
 * nodes, which must be refused with no EC2 call — with crash points of its own (its CreateSnapshots
 * or a DeleteSnapshot answer lost, a crash applying a group content's writes, its item sent twice,
 * a restart). Every VolumeSnapshotClass copies its snapshots to another Region (copyToRegion), so
 * a lifecycle with snapshots draws, after everything else, a CopySnapshot answer lost and a crash
 * applying a result that writes a content's copy annotation.
 */
import { DATA_MUTATIONS, MUTATIONS, type Mutation } from './ec2-transport.js';
import type { Rng } from './rng.js';
import { CLASSES, FAST_CLASS, SNAPSHOT_POLICIES, TAGGED_CLASS, ZONES, type ClassSpec, type SnapshotPolicy } from './world.js';

export type UserAction =
  | { kind: 'createClaim'; claim: string }
  /** A VolumeSnapshot of a claim; deleted at teardown. */
  | { kind: 'createSnapshot'; snapshot: string; claim: string; policy: SnapshotPolicy }
  /** The VolumeSnapshot deleted before the teardown: while a restore from it may still be under way. */
  | { kind: 'deleteSnapshot'; snapshot: string }
  | { kind: 'createPod'; pod: string; claim: string }
  | { kind: 'deletePod'; pod: string }
  /** `race`: the claim's item is built before the delete and sent together with its claim-deleted item. */
  | { kind: 'deleteClaim'; claim: string; race: boolean }
  /** The claim's request grows from 4Gi to 8Gi. */
  | { kind: 'resizeClaim'; claim: string }
  /** The claim asks for another VolumeAttributesClass. */
  | { kind: 'changeClass'; claim: string; className: string }
  /** The operator adopts the disk of the claim's static PV (tags it as `cluster adopt` does, not through volhook). */
  | { kind: 'adopt'; claim: string }
  /**
   * A pod placed on a node of `zone` with an inline `awsElasticBlockStore` volume naming an
   * adopted disk of the cluster the run puts into EC2 for it: no claim, no PV, a VolumeAttachment
   * with `spec.source.inlineVolumeSpec`. The disk is the user's: attached and detached, never deleted.
   */
  | { kind: 'createInlinePod'; pod: string; zone: string }
  /** A pod using several claims, pinned to node `node` (an index into the world's nodes). */
  | { kind: 'createGroupPod'; pod: string; claims: string[]; node: number }
  /**
   * The VolumeGroupSnapshot `group` of the claims labelled for it: taken once its pods run (the
   * runner holds it back until then — a group of volumes not attached is refused for good).
   */
  | { kind: 'createGroup'; group: string }
  /**
   * The VolumeGroupSnapshot deleted before the teardown, once it exists (`whenReady`: once it is
   * ready or refused, else while its snapshots may still be being taken), and after a restore
   * from one of its members was asked for.
   */
  | { kind: 'deleteGroup'; group: string; whenReady: boolean };

export type CrashPlan =
  /** The nth successful call of `action` acts in EC2, and its answer is lost. */
  | { kind: 'lostEc2'; action: Mutation; nth: number }
  /**
   * The nth backend result that carries writes: the forwarder applies the first ⌊cut·(n+1)⌋
   * of its n writes (0…n), then crashes — the rest of that answer, and of the step, is lost.
   * `group`: the nth such result of a VolumeGroupSnapshotContent item (its mark, status,
   * refusal, release), counted apart from the others. `copy`: the nth result that writes a
   * content's cross-Region copy annotation (volhook.io/snapshot-copy), counted apart too.
   */
  | { kind: 'lostWrites'; nth: number; cut: number; group?: true; copy?: true }
  /**
   * The forwarder restarts before step `step` (or the first later step it runs): its memory is
   * lost and it stays down `down` steps.
   */
  | { kind: 'restart'; step: number; down: number }
  /**
   * In step `step` (or the first later step with items), one item — the one at fraction `pick`
   * of the step's items — is sent twice at once. `group`: the item of a VolumeGroupSnapshotContent
   * (waiting for a step that has one).
   */
  | { kind: 'duplicate'; step: number; pick: number; group?: true }
  /** The claim is deleted while its item is in flight: claim and claim-deleted items at once. */
  | { kind: 'claimRace'; claim: string }
  /**
   * At step `step` a disk of the cluster appears whose claim no longer exists — what a
   * provisioner that crashed between CreateVolume and its PV leaves (external-provisioner
   * #1469) — and a snapshot of it whose content is gone: only the audit can find them, and they
   * must be gone by the end.
   */
  | { kind: 'leftover'; step: number };

export interface ClaimPlan {
  name: string;
  class: ClassSpec;
  /** A restore (from a VolumeSnapshot) or a clone (of a claim). */
  source?: { kind: 'VolumeSnapshot' | 'PersistentVolumeClaim'; name: string };
  /** Bound to a static PV (Retain) naming a disk put into EC2 for it, in `zone`. */
  static?: { disk: StaticDisk; zone: string };
  /** A member of group `group` (labelled for its selector). */
  memberOf?: string;
  /**
   * Restored from the member VolumeSnapshot the group `group` makes of claim `claim` (its name is
   * the snapshot controller's, known once the group is recorded: the runner holds the claim back until then).
   */
  fromGroupMember?: { group: string; claim: string };
}

/**
 * A VolumeGroupSnapshot of the claims labelled `app=<name>`. `split`: its claims are used by pods
 * on two nodes, so it must be refused (NotOneNode) with no EC2 call.
 */
export interface GroupPlan {
  name: string;
  claims: string[];
  policy: SnapshotPolicy;
  split: boolean;
  pods: { pod: string; claims: string[]; node: number }[];
}

/**
 * A static PV's disk: `foreign`, another cluster's (tagged for cluster "other", adopted there);
 * `unadopted`, this cluster's without `ebs.csi.aws.com/cluster=true` (as the EBS CSI controller
 * run with --k8s-tag-cluster-id leaves one).
 */
export type StaticDisk = 'foreign' | 'unadopted';

/** How often a lifecycle meets a foreign clone, and a not-adopted static disk. */
const FOREIGN_CLONE_CHANCE = 0.12;
const UNADOPTED_CHANCE = 0.15;
/** How often the operator adopts the not-adopted disk during the active steps. */
const ADOPT_CHANCE = 0.5;
/** How often a lifecycle has a pod with an inline volume, and how often that pod is deleted before the checkpoint. */
const INLINE_CHANCE = 0.25;
const INLINE_DELETE_CHANCE = 0.5;
/** How often a restore's snapshot, and a clone's source claim (drawn less often), is deleted while the new volume may be being made. */
const SNAPSHOT_DELETE_CHANCE = 0.4;
const CLONE_SOURCE_DELETE_CHANCE = 0.8;
/** How often a second claim is restored from the same snapshot. */
const SECOND_RESTORE_CHANCE = 0.5;
/** How often a lifecycle has a group snapshot, how often that group spans two nodes (refused), is restored from, is deleted early. */
const GROUP_CHANCE = 0.35;
const SPLIT_GROUP_CHANCE = 0.25;
const GROUP_RESTORE_CHANCE = 0.5;
const GROUP_EARLY_DELETE_CHANCE = 0.5;
/** How often a member is snapshotted on its own at the moment the group is taken. */
const GROUP_SINGLE_SNAPSHOT_CHANCE = 0.3;

export interface SnapshotPlan {
  name: string;
  claim: string;
  policy: SnapshotPolicy;
}

export interface Scenario {
  claims: ClaimPlan[];
  snapshots: SnapshotPlan[];
  groups: GroupPlan[];
  /** Steps with user actions, before the checkpoint. */
  activeSteps: number;
  /** User actions by step, in order. */
  actions: UserAction[][];
  /** Per step: its user actions happen while the forwarder's first requests are in flight. */
  midFlight: boolean[];
  crashes: CrashPlan[];
  /** Forwarder steps between deleting the pods and deleting the claims at teardown. */
  teardownGap: number;
}


export function generateScenario(rng: Rng): Scenario {
  const activeSteps = rng.int(8, 14);
  const actions: UserAction[][] = Array.from({ length: activeSteps }, () => []);
  const at = (step: number) => actions[Math.min(step, activeSteps - 1)] as UserAction[];
  const claims: ClaimPlan[] = [];
  /** Per claim: the step at which it becomes provisionable (created, and for WFFC, a pod made). */
  const provisionableAt = new Map<string, number>();
  const earlyDelete = new Map<string, Extract<UserAction, { kind: 'deleteClaim' }>>();

  const count = rng.weighted([
    [1, 3],
    [2, 4],
    [3, 3],
  ] as const);
  for (let i = 0; i < count; i++) {
    const name = `c${i}`;
    const spec = rng.pick(CLASSES);
    claims.push({ name, class: spec });
    const created = rng.int(0, 3);
    at(created).push({ kind: 'createClaim', claim: name });
    if (spec.binding === 'Immediate') provisionableAt.set(name, created);

    // Every run has something to provision: the first claim is Immediate or gets a pod.
    if (rng.chance(0.8) || (i === 0 && spec.binding === 'WaitForFirstConsumer')) {
      // Pods come and go: each may be deleted soon after it was made, and replaced.
      let podAt = created + rng.int(0, 2);
      if (spec.binding === 'WaitForFirstConsumer') provisionableAt.set(name, podAt);
      for (let k = 0; k < 3; k++) {
        const pod = `${name}-pod${k}`;
        at(podAt).push({ kind: 'createPod', pod, claim: name });
        if (!rng.chance(0.55)) break;
        const deleteAt = podAt + rng.int(0, 3);
        at(deleteAt).push({ kind: 'deletePod', pod });
        if (!rng.chance(0.5)) break;
        podAt = deleteAt + rng.int(0, 2);
      }
    }
    // Day two: the volume grows, or moves to another VolumeAttributesClass, or both.
    if (rng.chance(0.35)) at(created + rng.int(1, 5)).push({ kind: 'resizeClaim', claim: name });
    if (rng.chance(0.3)) at(created + rng.int(1, 6)).push({ kind: 'changeClass', claim: name, className: rng.chance(0.7) ? FAST_CLASS : TAGGED_CLASS });
    if (rng.chance(0.3)) {
      const del: Extract<UserAction, { kind: 'deleteClaim' }> = { kind: 'deleteClaim', claim: name, race: false };
      at(created + rng.int(0, 4)).push(del);
      earlyDelete.set(name, del);
    }
  }

  // Snapshots, restores and clones: a source claim of an Immediate CSI class, never deleted
  // early, snapshotted and restored from, and cloned. Their snapshots go at teardown.
  const snapshots: SnapshotPlan[] = [];
  if (rng.chance(0.5)) {
    const spec = rng.pick(CLASSES.filter((c) => c.binding === 'Immediate' && !c.inTree));
    const source = 'd0';
    claims.push({ name: source, class: spec });
    const created = rng.int(0, 2);
    at(created).push({ kind: 'createClaim', claim: source });
    if (rng.chance(0.75)) {
      const snapshot: SnapshotPlan = { name: 's0', claim: source, policy: rng.pick(SNAPSHOT_POLICIES) };
      snapshots.push(snapshot);
      const snapAt = created + rng.int(0, 3);
      at(snapAt).push({ kind: 'createSnapshot', snapshot: snapshot.name, claim: source, policy: snapshot.policy });
      if (rng.chance(0.8)) {
        const restore: ClaimPlan = { name: 'r0', class: rng.pick(CLASSES.filter((c) => c.binding === 'Immediate' && !c.inTree)), source: { kind: 'VolumeSnapshot', name: snapshot.name } };
        claims.push(restore);
        at(snapAt + rng.int(0, 3)).push({ kind: 'createClaim', claim: restore.name });
      }
    }
    if (rng.chance(0.6)) {
      const clone: ClaimPlan = { name: 'k0', class: spec, source: { kind: 'PersistentVolumeClaim', name: source } };
      claims.push(clone);
      at(created + rng.int(0, 4)).push({ kind: 'createClaim', claim: clone.name });
    }
  }
  const hasData = claims.some((c) => c.source) || snapshots.length > 0;

  const crashes: CrashPlan[] = [];
  const points = rng.weighted([
    [1, 2],
    [2, 3],
    [3, 4],
    [4, 4],
  ] as const);
  const flat = actions.flat();
  const withPods = flat.some((a) => a.kind === 'createPod');
  // Which mutations this lifecycle makes: attaches only with pods, modifications only with
  // day-two changes, snapshots and copies only with data plans.
  const mutations = MUTATIONS.filter(
    (m) =>
      m === 'CreateVolume' ||
      m === 'DeleteVolume' ||
      (withPods && (m === 'AttachVolume' || m === 'DetachVolume')) ||
      (m === 'ModifyVolume' && flat.some((a) => a.kind === 'resizeClaim' || (a.kind === 'changeClass' && a.className === FAST_CLASS))) ||
      (m === 'CreateTags' && flat.some((a) => a.kind === 'changeClass' && a.className === TAGGED_CLASS)) ||
      // CreateSnapshots only in a lifecycle with a group snapshot, which draws its own points.
      (hasData && DATA_MUTATIONS.includes(m) && m !== 'CreateSnapshots'),
  );
  const horizon = activeSteps + 4;
  for (let p = 0; p < points; p++) {
    const kind = rng.weighted([
      ['lostEc2', 7],
      ['lostWrites', 5],
      ['restart', 2],
      ['duplicate', 2],
      ['claimRace', 1.5],
      ['leftover', 1.5],
    ] as const);
    switch (kind) {
      case 'lostEc2':
        crashes.push({
          kind,
          // A lifecycle with day-two changes loses a ModifyVolume answer more often than not.
          action: mutations.includes('ModifyVolume') && rng.chance(0.5) ? 'ModifyVolume' : rng.pick(mutations),
          nth: rng.weighted([[1, 6], [2, 3], [3, 1]] as const),
        });
        break;
      case 'lostWrites':
        crashes.push({ kind, nth: rng.int(1, 8), cut: rng.next() });
        break;
      case 'restart':
        crashes.push({ kind, step: rng.int(0, horizon - 1), down: rng.weighted([[0, 5], [1, 3], [2, 2]] as const) });
        break;
      case 'duplicate':
        crashes.push({ kind, step: rng.int(0, horizon - 1), pick: rng.next() });
        break;
      case 'leftover':
        crashes.push({ kind, step: rng.int(0, horizon - 1) });
        break;
      case 'claimRace': {
        // Deleted the moment it can be provisioned, so that its CreateVolume races the delete.
        const candidates = claims.filter((c) => provisionableAt.has(c.name) && !crashes.some((x) => x.kind === 'claimRace' && x.claim === c.name));
        if (candidates.length === 0) break;
        const claim = rng.pick(candidates).name;
        const existing = earlyDelete.get(claim);
        if (existing) {
          for (const list of actions) {
            const i = list.indexOf(existing);
            if (i >= 0) list.splice(i, 1);
          }
        }
        const del: Extract<UserAction, { kind: 'deleteClaim' }> = { kind: 'deleteClaim', claim, race: true };
        at(provisionableAt.get(claim) as number).push(del);
        earlyDelete.set(claim, del);
        crashes.push({ kind, claim });
        break;
      }
    }
  }

  const midFlight = actions.map((list) => list.length > 0 && rng.chance(0.3));
  const teardownGap = rng.int(0, 2);
  // Last, so that the draws above are the same with or without these.
  const immediateCsi = CLASSES.filter((c) => c.binding === 'Immediate' && !c.inTree);
  if (rng.chance(FOREIGN_CLONE_CHANCE)) {
    const spec = rng.pick(immediateCsi);
    const created = rng.int(0, 3);
    claims.push({ name: 'f0', class: spec, static: { disk: 'foreign', zone: rng.pick(ZONES) } });
    at(created).push({ kind: 'createClaim', claim: 'f0' });
    // The clone asks for the source's class, as a clone must: only ownership stands in its way.
    claims.push({ name: 'kf0', class: spec, source: { kind: 'PersistentVolumeClaim', name: 'f0' } });
    at(created + rng.int(0, 3)).push({ kind: 'createClaim', claim: 'kf0' });
  }
  if (rng.chance(UNADOPTED_CHANCE)) {
    const created = rng.int(0, 3);
    claims.push({ name: 'u0', class: rng.pick(immediateCsi), static: { disk: 'unadopted', zone: rng.pick(ZONES) } });
    at(created).push({ kind: 'createClaim', claim: 'u0' });
    const podAt = created + rng.int(0, 2);
    at(podAt).push({ kind: 'createPod', pod: 'u0-pod0', claim: 'u0' });
    // After the pod, mostly once its attach was refused: then it must attach.
    if (rng.chance(ADOPT_CHANCE)) at(podAt + rng.int(1, 4)).push({ kind: 'adopt', claim: 'u0' });
  }
  if (rng.chance(INLINE_CHANCE)) {
    const podAt = rng.int(0, 3);
    at(podAt).push({ kind: 'createInlinePod', pod: 'i0-pod0', zone: rng.pick(ZONES) });
    if (rng.chance(INLINE_DELETE_CHANCE)) at(podAt + rng.int(1, 4)).push({ kind: 'deletePod', pod: 'i0-pod0' });
  }
  // Sources deleted while a volume may be being made from them (their protection's test). Last
  // as well, for the same reason.
  const createdAt = (name: string) => actions.findIndex((list) => list.some((a) => (a.kind === 'createClaim' && a.claim === name) || (a.kind === 'createSnapshot' && a.snapshot === name)));
  // A second restore from the same snapshot, about when the first is made: one protection for
  // both, which the last of them to be done lets go.
  const r0 = claims.find((c) => c.name === 'r0');
  if (r0 && rng.chance(SECOND_RESTORE_CHANCE)) {
    claims.push({ name: 'r1', class: r0.class, source: { kind: 'VolumeSnapshot', name: 's0' } });
    at(createdAt('r0') + rng.int(0, 2)).push({ kind: 'createClaim', claim: 'r1' });
  }
  if (r0 && rng.chance(SNAPSHOT_DELETE_CHANCE)) {
    at(createdAt('r0') + rng.int(0, 2)).push({ kind: 'deleteSnapshot', snapshot: 's0' });
  }
  // Not when a snapshot is cut from it too: a claim deleted before that snapshot is ready holds
  // it for good (the snapshot controller's own protection), a case of its own, not this one.
  if (claims.some((c) => c.name === 'k0') && snapshots.length === 0 && rng.chance(CLONE_SOURCE_DELETE_CHANCE)) {
    at(Math.max(createdAt('k0'), createdAt('d0')) + rng.int(0, 2)).push({ kind: 'deleteClaim', claim: 'd0', race: false });
  }
  // A group snapshot, last of all for the same reason: two or three claims of CSI
  // WaitForFirstConsumer classes used by one pod on one node (or, split, by pods on two nodes).
  const groups: GroupPlan[] = [];
  if (rng.chance(GROUP_CHANCE)) {
    const group = 'g0';
    const split = rng.chance(SPLIT_GROUP_CHANCE);
    const members = Array.from({ length: rng.int(2, 3) }, (_, i) => `m${i}`);
    const wffc = CLASSES.filter((c) => c.binding === 'WaitForFirstConsumer' && !c.inTree);
    const created = rng.int(0, 2);
    for (const name of members) {
      claims.push({ name, class: rng.pick(wffc), memberOf: group });
      at(created).push({ kind: 'createClaim', claim: name });
    }
    const node = rng.int(0, ZONES.length - 1);
    const pods = split
      ? [
          { pod: `${group}-pod0`, claims: members.slice(0, -1), node },
          { pod: `${group}-pod1`, claims: members.slice(-1), node: (node + 1) % ZONES.length },
        ]
      : [{ pod: `${group}-pod0`, claims: members, node }];
    const podAt = created + rng.int(0, 1);
    for (const p of pods) at(podAt).push({ kind: 'createGroupPod', ...p });
    const policy = rng.pick(SNAPSHOT_POLICIES);
    groups.push({ name: group, claims: members, policy, split, pods });
    const groupAt = podAt + rng.int(1, 3);
    at(groupAt).push({ kind: 'createGroup', group });
    // A VolumeSnapshot of a member taken the moment the group is (a claim's own schedule meeting
    // the group's): EC2 takes one snapshot of a volume at a time, so one of the two must wait.
    if (!split && rng.chance(GROUP_SINGLE_SNAPSHOT_CHANCE)) {
      const single: SnapshotPlan = { name: 'gs0', claim: rng.pick(members), policy: rng.pick(SNAPSHOT_POLICIES) };
      snapshots.push(single);
      const action: UserAction = { kind: 'createSnapshot', snapshot: single.name, claim: single.claim, policy: single.policy };
      if (rng.chance(0.5)) at(groupAt).unshift(action);
      else at(groupAt).push(action);
    }
    if (!split && rng.chance(GROUP_RESTORE_CHANCE)) {
      claims.push({ name: 'gr0', class: rng.pick(immediateCsi), fromGroupMember: { group, claim: rng.pick(members) } });
      at(groupAt + rng.int(0, 2)).push({ kind: 'createClaim', claim: 'gr0' });
    }
    if (rng.chance(GROUP_EARLY_DELETE_CHANCE)) at(groupAt + rng.int(0, 4)).push({ kind: 'deleteGroup', group, whenReady: rng.chance(0.5) });
    // Its own crash points: the group's CreateSnapshots answer lost, a DeleteSnapshot's (its
    // deletion), a crash applying a group content's writes, its item sent twice, a restart.
    if (!split && rng.chance(0.6)) crashes.push({ kind: 'lostEc2', action: 'CreateSnapshots', nth: 1 });
    if (!split && rng.chance(0.4)) crashes.push({ kind: 'lostEc2', action: 'DeleteSnapshot', nth: rng.int(1, members.length) });
    if (rng.chance(0.7)) crashes.push({ kind: 'lostWrites', nth: rng.int(1, 4), cut: rng.next(), group: true });
    if (rng.chance(0.4)) crashes.push({ kind: 'duplicate', step: groupAt + rng.int(0, 3), pick: rng.next(), group: true });
    if (rng.chance(0.3)) crashes.push({ kind: 'restart', step: groupAt + rng.int(0, 4), down: rng.weighted([[0, 5], [1, 3], [2, 2]] as const) });
  }
  // Last of all, so that every draw before is as it was: the cross-Region copy of each snapshot
  // (every VolumeSnapshotClass copies to COPY_REGION) — a CopySnapshot answer lost, and a crash
  // applying a result that writes the copy's annotation (its intent, `copying`, its ID, its state).
  if (snapshots.length > 0) {
    if (rng.chance(0.6)) crashes.push({ kind: 'lostEc2', action: 'CopySnapshot', nth: rng.int(1, snapshots.length) });
    if (rng.chance(0.6)) crashes.push({ kind: 'lostWrites', nth: rng.int(1, 3 * snapshots.length), cut: rng.next(), copy: true });
  }
  return { claims, snapshots, groups, activeSteps, actions, midFlight, crashes, teardownGap };
}

export function describeCrash(plan: CrashPlan): string {
  switch (plan.kind) {
    case 'lostEc2':
      return `lost answer of ${plan.action} #${plan.nth}`;
    case 'lostWrites':
      return `forwarder crash applying ${plan.group ? 'group content ' : plan.copy ? 'copy annotation ' : ''}result-with-writes #${plan.nth} (cut ${plan.cut.toFixed(2)})`;
    case 'restart':
      return `forwarder restart (due from step ${plan.step}, down ${plan.down} steps)`;
    case 'duplicate':
      return `${plan.group ? 'group content ' : ''}item sent twice at once (due from step ${plan.step})`;
    case 'claimRace':
      return `claim ${plan.claim} deleted with its item in flight`;
    case 'leftover':
      return `a disk left by a claim that is gone (due from step ${plan.step})`;
  }
}

/** `3~[…]`: the actions of step 3 happen while requests are in flight. */
export function describeScenario(s: Scenario): string {
  const claims = [
    ...s.claims.map(
      (c) =>
        `${c.name}:${c.class.name}${c.source ? `<${c.source.kind === 'VolumeSnapshot' ? 'snapshot' : 'clone'} ${c.source.name}` : ''}${c.fromGroupMember ? `<member ${c.fromGroupMember.claim} of ${c.fromGroupMember.group}` : ''}${c.static ? `=static ${c.static.disk} disk` : ''}`,
    ),
    ...s.snapshots.map((v) => `${v.name}:snapshot of ${v.claim} (${v.policy})`),
    ...s.groups.map((g) => `${g.name}:group of ${g.claims.join('+')} (${g.policy}${g.split ? ', split over two nodes' : ''})`),
  ].join(' ');
  const actions = s.actions
    .map((list, step) => (list.length ? `${step}${s.midFlight[step] ? '~' : ''}[${list.map(describeAction).join(',')}]` : ''))
    .filter(Boolean)
    .join(' ');
  return `${claims} | ${actions} | teardown gap ${s.teardownGap}`;
}

export function describeAction(a: UserAction): string {
  switch (a.kind) {
    case 'createClaim':
      return `+${a.claim}`;
    case 'createSnapshot':
      return `+${a.snapshot}`;
    case 'deleteSnapshot':
      return `-${a.snapshot}`;
    case 'createPod':
      return `+${a.pod}`;
    case 'deletePod':
      return `-${a.pod}`;
    case 'deleteClaim':
      return `-${a.claim}${a.race ? '(race)' : ''}`;
    case 'resizeClaim':
      return `${a.claim}→8Gi`;
    case 'changeClass':
      return `${a.claim}→${a.className}`;
    case 'adopt':
      return `adopt(${a.claim})`;
    case 'createInlinePod':
      return `+${a.pod}(inline, ${a.zone})`;
    case 'createGroupPod':
      return `+${a.pod}(${a.claims.join('+')} on node ${a.node})`;
    case 'createGroup':
      return `+${a.group}`;
    case 'deleteGroup':
      return `-${a.group}${a.whenReady ? '(ready)' : ''}`;
  }
}
