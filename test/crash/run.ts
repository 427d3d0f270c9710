/**
 * One run of the crash explorer: a seeded lifecycle with its crash points, played against
 * the real app, gateway, simulator, controllers and `applyWrites`, then judged.
 *
 * Phases: the active steps (the scenario's user actions, one forwarder step after each
 * step's actions, the clock advanced 0.5–4 s), a checkpoint (step until the live state has
 * converged — claims Bound, pods Running, VolumeAttachments attached, deleted claims cleaned
 * up — or the time budget is spent, or nothing moves any more), the teardown (all pods
 * deleted, then all claims), and the end (the same until everything is gone as its reclaim
 * policy says, then two steps more to give any wrong action its chance), the user taking over
 * some Released Retain disks (their PVs deleted: the disks are theirs, never the audit's), and
 * the scheduled audit's turn: two consecutive audits with --delete, its two phases (a forwarder
 * resync after the last leftover disk is past every grace, the audit that marks; steps until
 * the backend holds a report received after the mark, the audit that deletes; then two steps
 * more). The clock moves 1–5 s per step while converging, or straight to the next due item
 * when nothing was sent.
 *
 * Disks volhook did not make (scenario.ts) are put into EC2 when their claim is due: the disk,
 * a static PV (Retain) naming it pre-bound to the claim, and the claim. The operator's adoption
 * of the one not adopted is a call of its own to the simulator, as `cluster adopt` is outside
 * the backend. At the end the user deletes those static PVs (Released): the disks stay, the
 * cluster's one the user's (taken over, like a Retain disk).
 *
 * Group snapshot actions wait until they can happen (canPerform): the VolumeGroupSnapshot once
 * its pods run, a restore from a member once the member exists, an early deletion once the group
 * content exists; each step first performs what waited. At the teardown the groups are deleted
 * with the VolumeSnapshots.
 */
import { createHash } from 'node:crypto';
import { CrashController } from './crashes.js';
import { seedNodeRandomness } from './determinism.js';
import { convergenceProblems, diskIdOf, finalVerdict, groupContentName, unsettled, type Counts, type Pv, type TrackedClaim, type TrackedGroup, type TrackedSnapshot } from './checks.js';
import { ForwarderModel } from './forwarder-model.js';
import { Oracle } from './oracle.js';
import { Rng } from './rng.js';
import { describeAction, describeScenario, generateScenario, type StaticDisk, type UserAction } from './scenario.js';
import { createWorld, DRIVER, FOREIGN_CLUSTER, groupClassName, REGION, snapshotClassName, type World } from './world.js';
import { wantedTags } from '../../lib/cli/adopt-plan.js';
import type { KubeObject } from '../../lib/local/kube/index.js';
import { runAudit } from '../../lib/audit/index.js';
import { reportTime } from '../../lib/reports/index.js';

export interface RunOptions {
  /** Simulated time allowed for the live state to converge at the checkpoint. Default 4 min. */
  liveBudgetMs?: number;
  /** Simulated time allowed for everything to be cleaned up after the teardown. Default 6 min. */
  finalBudgetMs?: number;
}

export interface RunReport {
  seed: number;
  scenario: string;
  /** The crash points that fired. */
  points: string[];
  counts: Counts;
  /** One line per count. */
  findings: string[];
  steps: number;
  /** Requests the forwarder model sent, and items in them. */
  requests: number;
  items: number;
  ms: number;
  /** Hash of the run's trace: the same seed must give the same hash. */
  traceHash: string;
  trace: string[];
  /** Not counted, but worth a look when a run fails: backend refusals, write failures… */
  diagnostics: string[];
  /** What the run's group snapshot lifecycle did (zeros without one). */
  groups: GroupFigures;
  /** Attachments the simulator held stuck `attaching` that were detached to be made again; of them, before the driver's 90 s. */
  stuckGivenUp: number;
  stuckGivenUpEarly: number;
}

export interface GroupFigures {
  /** Lifecycles with a VolumeGroupSnapshot; of them, with its claims on two nodes. */
  lifecycles: number;
  split: number;
  /** CreateSnapshots EC2 carried out, and the snapshots they made. */
  createSnapshots: number;
  snapshots: number;
  /** Claims restored from a member. */
  restores: number;
  /** Groups made and deleted, by policy; of them, deleted before the teardown. */
  deletedDelete: number;
  deletedRetain: number;
  deletedEarly: number;
}

export function zeroGroupFigures(): GroupFigures {
  return { lifecycles: 0, split: 0, createSnapshots: 0, snapshots: 0, restores: 0, deletedDelete: 0, deletedRetain: 0, deletedEarly: 0 };
}

const NAMESPACE = 'default';
/**
 * Simulated time without any change to the storage objects or the volumes after which a run
 * is stuck: longer than any wait the backend asks for (a deleted claim's protection is kept
 * ~2 min for a CreateVolume that may still land) plus a forwarder resync.
 */
const STUCK_MS = 200_000;
/** The share of AttachVolumes the simulator leaves stuck `attaching`, for the backend to give up and make again. */
const STUCK_ATTACH_RATE = 0.05;
/** A step that sends nothing moves the clock to the next due item, but no further than this. */
const IDLE_JUMP_MS = 20_000;
/** The graces the audit runs with, picked at random: the smallest leave only the report's evidence. */
const AUDIT_GRACES_MS = [0, 0, 5_000, 60_000] as const;
/** Simulated time the final audit waits for after the last change: a forwarder resync, so its report is fresh. */
const FINAL_RESYNC_MS = 50_000;
/** A guard; the simulated-time budgets end a convergence long before. */
const MAX_CONVERGE_STEPS = 400;
/** Steps the audit's second phase waits at most for a report received after the first's marks (a forwarder down comes back well within). */
const MAX_REPORT_WAIT_STEPS = 60;
/** How often the user takes over a Released Retain disk (deletes its PV) before the final audits. */
const TAKE_OVER_CHANCE = 0.5;

export async function runOnce(seed: number, options: RunOptions = {}): Promise<RunReport> {
  const started = performance.now();
  const restore = seedNodeRandomness(seed);
  let world: World | undefined;
  try {
    const rng = new Rng(seed);
    const scenario = generateScenario(rng.fork());
    const runtime = rng.fork();
    const trace: string[] = [];
    let step = 0;
    const log = (line: string) => void trace.push(`${step} ${line}`);

    const crashes = new CrashController(scenario.crashes);
    const tracked: TrackedClaim[] = scenario.claims.map((c) => ({ name: c.name, class: c.class, deleted: false }));
    const trackedSnapshots: TrackedSnapshot[] = [];
    const trackedGroups: TrackedGroup[] = scenario.groups.map((g) => ({ name: g.name, policy: g.policy, split: g.split, members: g.claims.length, deleted: false }));
    for (const c of tracked) {
      const from = scenario.claims.find((p) => p.name === c.name)?.fromGroupMember;
      if (from) c.fromGroup = from.group;
    }
    const claimOfPvName = (pvName: string) => tracked.find((c) => c.uid && `pvc-${c.uid}` === pvName)?.name;
    const describeVolume = (volumeId: string, csiName?: string) => {
      const name = csiName ?? world?.sim.volume(volumeId)?.tags.find((t) => t.key === 'CSIVolumeName')?.value ?? '';
      const claim = claimOfPvName(name);
      return claim ? `${volumeId} (${claim})` : volumeId;
    };
    const oracle = new Oracle(crashes, log, describeVolume);
    for (const g of scenario.groups) if (g.split) oracle.splitGroups.add(g.name);
    world = await createWorld({ seed, clusterId: 'crash', observe: (call) => oracle.observe(call), stuckAttachRate: STUCK_ATTACH_RATE });
    const w = world;
    oracle.world = w;
    const forwarder = new ForwarderModel(w, crashes, runtime.fork(), log, (uid) => tracked.find((c) => c.uid === uid)?.name ?? uid);
    log(`scenario ${describeScenario(scenario)}`);

    const ignoreNotFound = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err;
      }
    };
    const deleteClaimAndPods = async (claim: string) => {
      for (const pod of w.store.list('pods', { namespace: NAMESPACE }).items) {
        const uses = ((pod.spec as { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] }).volumes ?? []).some(
          (v) => v.persistentVolumeClaim?.claimName === claim,
        );
        if (uses) ignoreNotFound(() => w.store.delete('pods', pod.metadata.name, NAMESPACE));
      }
      ignoreNotFound(() => w.store.delete('persistentvolumeclaims', claim, NAMESPACE));
      await w.settle();
    };

    /**
     * A disk volhook did not make, put into EC2 (another cluster's, adopted there; or this
     * cluster's, not adopted), a static PV (Retain) naming it, pre-bound to the claim, and the claim.
     */
    const createStatic = (c: TrackedClaim, kind: StaticDisk, zone: string) => {
      const tags: Record<string, string> =
        kind === 'foreign'
          ? { [`kubernetes.io/cluster/${FOREIGN_CLUSTER}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': FOREIGN_CLUSTER }
          : { [`kubernetes.io/cluster/${w.clusterId}`]: 'owned' };
      const [disk] = w.sim.seedVolumes({ zone, tags, createdAt: new Date(w.clock.now()).toISOString() });
      const volumeId = disk!.id;
      if (kind === 'foreign') oracle.foreign.set(volumeId, disk!);
      const pv = `static-${c.name}`;
      c.static = { disk: kind, volumeId, pv };
      w.store.create('persistentvolumes', {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: pv },
        spec: {
          capacity: { storage: '4Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Retain',
          storageClassName: c.class.name,
          claimRef: { namespace: NAMESPACE, name: c.name },
          csi: { driver: DRIVER, volumeHandle: volumeId, fsType: 'ext4' },
          nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }] }] } },
        },
      });
      const created = w.store.create('persistentvolumeclaims', {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: c.name, namespace: NAMESPACE },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: c.class.name, resources: { requests: { storage: '4Gi' } }, volumeName: pv },
      });
      c.uid = created.metadata.uid;
      log(`static PV ${pv} (Retain) for ${c.name}: ${kind === 'foreign' ? `cluster "${FOREIGN_CLUSTER}"'s disk` : 'a disk of the cluster, not adopted,'} ${volumeId} in ${zone}`);
    };

    /**
     * The operator adopts the disk, as `cluster adopt --apply` does: the tags it would add, added
     * by a call of its own (outside the backend and its role: not the oracle's to judge).
     */
    const adopt = async (volumeId: string, pvName: string, claim: string) => {
      const volume = w.sim.volume(volumeId);
      const present = new Set(volume?.tags.map((t) => t.key));
      const wanted = wantedTags(w.clusterId, [{ pv: pvName, source: 'csi', volumeId, given: volumeId, claim: { namespace: NAMESPACE, name: claim } }]);
      const tags = Object.entries(wanted).filter(([key]) => !present.has(key));
      const params: Record<string, string> = { Action: 'CreateTags', 'ResourceId.1': volumeId };
      tags.forEach(([key, value], i) => {
        params[`Tag.${i + 1}.Key`] = key;
        params[`Tag.${i + 1}.Value`] = value;
      });
      const answer = await w.sim.call(params);
      if (answer.status !== 200) throw new Error(`the operator's adoption of ${volumeId} failed: ${answer.body}`);
      log(`operator adopts ${volumeId} (${claim}): ${tags.map(([key, value]) => `${key}=${value}`).join(', ')}`);
    };

    /** The member VolumeSnapshot group `group` made of claim `claim`, once there (and not being deleted). */
    const memberSnapshotOf = (group: string, claim: string): string | undefined => {
      const uid = trackedGroups.find((g) => g.name === group)?.uid;
      if (!uid) return undefined;
      const member = w.store.list('volumesnapshots', { namespace: NAMESPACE }).items.find(
        (v) =>
          !v.metadata.deletionTimestamp &&
          (v.metadata.ownerReferences as { kind?: string; uid?: string }[] | undefined)?.some((o) => o.kind === 'VolumeGroupSnapshot' && o.uid === uid) &&
          (v.spec as { source?: { persistentVolumeClaimName?: string } }).source?.persistentVolumeClaimName === claim,
      );
      return member?.metadata.name;
    };
    const podsRun = (group: string) =>
      scenario.groups.find((g) => g.name === group)!.pods.every((p) => (w.store.get('pods', p.pod, NAMESPACE)?.status as { phase?: string } | undefined)?.phase === 'Running');
    /**
     * Whether an action can happen now, or is held back until it can: a group is taken once its
     * pods run (a group of volumes not attached is refused for good, as a user would not take
     * one), and so is a member's own snapshot planned with it; a restore from a member once the
     * member is there; an early group deletion once the group's content exists (once it is ready
     * or refused, when so planned) and its restore was asked for.
     */
    const canPerform = (action: UserAction): boolean => {
      switch (action.kind) {
        case 'createGroup':
          return podsRun(action.group);
        case 'createSnapshot': {
          // A member's own snapshot is taken with its group, once the group's pods run.
          const group = scenario.claims.find((p) => p.name === action.claim)?.memberOf;
          return !group || podsRun(group);
        }
        case 'createClaim': {
          const from = scenario.claims.find((p) => p.name === action.claim)?.fromGroupMember;
          return !from || memberSnapshotOf(from.group, from.claim) !== undefined;
        }
        case 'deleteGroup': {
          const g = trackedGroups.find((t) => t.name === action.group)!;
          if (!g.uid) return false;
          const restore = tracked.find((c) => c.fromGroup === g.name);
          if (restore && !restore.uid) return false;
          // Not ready: once its content is made, while its snapshots may be being taken.
          const content = w.store.get('volumegroupsnapshotcontents', groupContentName(g.uid));
          if (!action.whenReady) return content !== undefined;
          const vgs = w.store.get('volumegroupsnapshots', g.name, NAMESPACE)?.status as { readyToUse?: boolean } | undefined;
          return vgs?.readyToUse === true || (content?.status as { error?: unknown } | undefined)?.error !== undefined;
        }
        default:
          return true;
      }
    };
    let deletedEarly = 0;
    /** Actions held back, in order. */
    const heldBack: UserAction[] = [];
    const performOrHold = async (action: UserAction) => {
      if (canPerform(action)) await perform(action);
      else {
        log(`user ${describeAction(action)} held back`);
        heldBack.push(action);
      }
    };
    const performHeldBack = async () => {
      for (const action of [...heldBack]) {
        if (!canPerform(action)) continue;
        heldBack.splice(heldBack.indexOf(action), 1);
        await perform(action);
      }
    };

    const perform = async (action: UserAction) => {
      log(`user ${describeAction(action)}`);
      switch (action.kind) {
        case 'createClaim': {
          const c = tracked.find((t) => t.name === action.claim) as TrackedClaim;
          const plan = scenario.claims.find((p) => p.name === c.name);
          if (plan?.static) {
            createStatic(c, plan.static.disk, plan.static.zone);
            break;
          }
          const member = plan?.fromGroupMember && memberSnapshotOf(plan.fromGroupMember.group, plan.fromGroupMember.claim);
          const source = member ? { kind: 'VolumeSnapshot' as const, name: member } : plan?.source;
          const dataSource = source && (source.kind === 'VolumeSnapshot' ? { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: source.name } : { kind: 'PersistentVolumeClaim', name: source.name });
          if (member) log(`user restores ${c.name} from ${member}, the member of ${plan?.fromGroupMember?.claim} in ${plan?.fromGroupMember?.group}`);
          const created = w.store.create('persistentvolumeclaims', {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: { name: c.name, namespace: NAMESPACE, ...(plan?.memberOf && { labels: { app: plan.memberOf } }) },
            spec: {
              accessModes: ['ReadWriteOnce'],
              storageClassName: c.class.name,
              resources: { requests: { storage: '4Gi' } },
              ...(dataSource && { dataSource, dataSourceRef: dataSource }),
            },
          });
          c.uid = created.metadata.uid;
          break;
        }
        case 'createSnapshot': {
          const created = w.store.create('volumesnapshots', {
            apiVersion: 'snapshot.storage.k8s.io/v1',
            kind: 'VolumeSnapshot',
            metadata: { name: action.snapshot, namespace: NAMESPACE },
            spec: { volumeSnapshotClassName: snapshotClassName(action.policy), source: { persistentVolumeClaimName: action.claim } },
          } as never);
          trackedSnapshots.push({ name: action.snapshot, policy: action.policy, uid: created.metadata.uid, deleted: false });
          break;
        }
        case 'deleteSnapshot': {
          const v = trackedSnapshots.find((t) => t.name === action.snapshot);
          if (!v) break;
          v.deleted = true;
          ignoreNotFound(() => w.store.delete('volumesnapshots', action.snapshot, NAMESPACE));
          break;
        }
        case 'createPod':
          w.store.create('pods', {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: action.pod, namespace: NAMESPACE },
            spec: {
              containers: [{ name: 'app', image: 'busybox:1.36', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
              volumes: [{ name: 'data', persistentVolumeClaim: { claimName: action.claim } }],
            },
          });
          break;
        case 'createInlinePod': {
          // An adopted disk of the cluster made by someone else (no CSIVolumeName: not volhook's to judge in an audit).
          const tags = { [`kubernetes.io/cluster/${w.clusterId}`]: 'owned', 'ebs.csi.aws.com/cluster': 'true', 'volhook.io/cluster': w.clusterId };
          const [disk] = w.sim.seedVolumes({ zone: action.zone, tags, createdAt: new Date(w.clock.now()).toISOString() });
          oracle.inlineDisks.set(disk!.id, action.pod);
          const node = w.nodes.find((n) => n.zone === action.zone)!;
          w.store.create('pods', {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: action.pod, namespace: NAMESPACE },
            spec: {
              nodeName: node.name,
              containers: [{ name: 'app', image: 'busybox:1.36', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
              volumes: [{ name: 'data', awsElasticBlockStore: { volumeID: `aws://${action.zone}/${disk!.id}`, fsType: 'ext4' } }],
            },
          });
          log(`inline disk ${disk!.id} in ${action.zone} for pod ${action.pod} on ${node.name}`);
          break;
        }
        case 'deletePod':
          ignoreNotFound(() => w.store.delete('pods', action.pod, NAMESPACE));
          break;
        case 'createGroupPod': {
          const node = w.nodes[action.node]!;
          w.store.create('pods', {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: action.pod, namespace: NAMESPACE },
            spec: {
              nodeSelector: { 'kubernetes.io/hostname': node.name },
              containers: [{ name: 'app', image: 'busybox:1.36', volumeMounts: action.claims.map((claim) => ({ name: claim, mountPath: `/data/${claim}` })) }],
              volumes: action.claims.map((claim) => ({ name: claim, persistentVolumeClaim: { claimName: claim } })),
            },
          });
          break;
        }
        case 'createGroup': {
          const g = trackedGroups.find((t) => t.name === action.group)!;
          const created = w.store.create('volumegroupsnapshots', {
            apiVersion: 'groupsnapshot.storage.k8s.io/v1',
            kind: 'VolumeGroupSnapshot',
            metadata: { name: g.name, namespace: NAMESPACE },
            spec: { volumeGroupSnapshotClassName: groupClassName(g.policy), source: { selector: { matchLabels: { app: g.name } } } },
          } as never);
          g.uid = created.metadata.uid;
          break;
        }
        case 'deleteGroup': {
          const g = trackedGroups.find((t) => t.name === action.group)!;
          g.deleted = true;
          deletedEarly++;
          ignoreNotFound(() => w.store.delete('volumegroupsnapshots', g.name, NAMESPACE));
          break;
        }
        case 'resizeClaim':
        case 'changeClass': {
          const c = tracked.find((t) => t.name === action.claim) as TrackedClaim;
          const pvc = w.store.get('persistentvolumeclaims', action.claim, NAMESPACE) as
            | (KubeObject & { spec: { resources: { requests: { storage: string } }; volumeAttributesClassName?: string } })
            | undefined;
          if (!pvc || pvc.metadata.deletionTimestamp || c.deleted) break;
          if (action.kind === 'resizeClaim') pvc.spec.resources.requests.storage = '8Gi';
          else pvc.spec.volumeAttributesClassName = action.className;
          try {
            w.store.update('persistentvolumeclaims', pvc);
          } catch (err) {
            // The API server refuses a new size for a claim not bound yet, as Kubernetes does.
            if ((err as { code?: number }).code !== 422) throw err;
            log(`user ${describeAction(action)} refused: ${(err as Error).message}`);
            break;
          }
          if (action.kind === 'resizeClaim') c.resized = true;
          else c.volumeAttributesClass = action.className;
          break;
        }
        case 'adopt': {
          const c = tracked.find((t) => t.name === action.claim) as TrackedClaim;
          if (c.static) await adopt(c.static.volumeId, c.static.pv, c.name);
          break;
        }
        case 'deleteClaim': {
          (tracked.find((t) => t.name === action.claim) as TrackedClaim).deleted = true;
          const plan = action.race ? crashes.claimRace(action.claim) : undefined;
          if (plan) {
            const detail = await forwarder.race(step, action.claim, () => deleteClaimAndPods(action.claim));
            if (detail) {
              crashes.fired(plan, detail);
              break;
            }
          }
          ignoreNotFound(() => w.store.delete('persistentvolumeclaims', action.claim, NAMESPACE));
          break;
        }
      }
      await w.settle();
    };

    /**
     * The audit with --delete, as the scheduled function runs it, with a grace of 0–60 s: the
     * smallest graces leave only the report's evidence between a disk being provisioned and its
     * deletion. It runs while the forwarder's requests are in flight (disks made, PVs not yet
     * written) or between steps; its DeleteVolume answers may be lost like any other.
     */
    const audit = async () => {
      const graceMs = runtime.pick(AUDIT_GRACES_MS);
      const result = await runAudit({ clusterId: w.clusterId, region: REGION, gateway: w.gateway(), reports: w.reports, graceMs, delete: true, deleteSnapshots: true, now: () => w.clock.now() });
      const deleted = result.deletions.filter((d) => d.outcome === 'deleted').map((d) => describeVolume(d.volumeId));
      const marked = result.deletions.filter((d) => d.outcome === 'marked').map((d) => describeVolume(d.volumeId));
      log(
        `audit (grace ${graceMs / 1000}s): ${result.orphans.length} orphan(s), ${result.unknown.length} unknown, ${result.lost.length} lost, ${result.drift.length} drift` +
          `${marked.length ? `; marked ${marked.join(', ')}` : ''}${deleted.length ? `; deleted ${deleted.join(', ')}` : ''}`,
      );
    };

    /** When the last leftover disk (and snapshot) was made: the final audit waits until it is past every grace. */
    let lastLeftoverAt = -Infinity;
    /** One step: a due restart, the forwarder's step (with an audit sometimes), then the clock moves on. */
    const forwarderStep = async (minMs: number, maxMs: number, during?: () => Promise<void>) => {
      await performHeldBack();
      const restart = crashes.restartAt(step);
      if (restart && forwarder.running) {
        crashes.fired(restart, `at step ${step}`);
        forwarder.crash(step + restart.down, 'restart');
      }
      const leftover = crashes.leftoverAt(step);
      if (leftover) {
        lastLeftoverAt = w.clock.now();
        const uid = `${runtime.int(0x10000000, 0xffffffff).toString(16)}-0000-4000-8000-${String(step).padStart(12, '0')}`;
        const [disk] = w.sim.seedVolumes({
          zone: runtime.pick(w.nodes).zone,
          tags: { CSIVolumeName: `pvc-${uid}`, 'ebs.csi.aws.com/cluster': 'true', [`kubernetes.io/cluster/${w.clusterId}`]: 'owned', 'volhook.io/cluster': w.clusterId },
          createdAt: new Date(w.clock.now()).toISOString(),
        });
        // And a snapshot of it whose content is gone (a Retain content deleted, say): only the audit finds it either.
        const [snapshot] = w.sim.seedSnapshots({
          volumeId: disk!.id,
          sizeGiB: disk!.size,
          tags: { CSIVolumeSnapshotName: `snapcontent-${uid}`, 'ebs.csi.aws.com/cluster': 'true', [`kubernetes.io/cluster/${w.clusterId}`]: 'owned', 'volhook.io/cluster': w.clusterId },
          startedAt: new Date(w.clock.now()).toISOString(),
        });
        crashes.fired(leftover, `${disk!.id} and ${snapshot!.id} at step ${step}`);
        log(`leftover disk ${disk!.id} (claim pvc-${uid} gone) and snapshot ${snapshot!.id} (content snapcontent-${uid} gone)`);
      }
      const auditing = runtime.chance(0.35);
      const sent = await forwarder.step(
        step,
        auditing
          ? async () => {
              await during?.();
              await audit();
            }
          : during,
      );
      let advance = runtime.int(minMs, maxMs);
      // Nothing to send: skip ahead to when something is due (at most IDLE_JUMP_MS).
      if (sent === 0) advance = Math.max(advance, Math.min(forwarder.nextDueAt() - w.clock.now(), IDLE_JUMP_MS));
      w.clock.advance(advance);
      step++;
    };

    /** What would show progress: the storage objects and the volumes. Events are left out. */
    const fingerprint = () => {
      const rvs = (['persistentvolumeclaims', 'persistentvolumes', 'volumeattachments', 'pods', 'volumesnapshots', 'volumesnapshotcontents', 'volumegroupsnapshots', 'volumegroupsnapshotcontents'] as const).map((r) =>
        w.store.list(r).items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).join(','),
      );
      const volumes = w.sim.volumes().map((v) => `${v.id}:${v.state}:${v.attachments.map((a) => `${a.instanceId}/${a.state}`).join('+')}`);
      const snapshots = w.sim.snapshots().map((v) => `${v.id}:${v.state}`);
      return [...rvs, ...volumes, ...snapshots].join('|');
    };
    /**
     * Steps until nothing is unsettled, `budgetMs` of simulated time has passed, or nothing
     * has moved for STUCK_MS (longer than any wait the backend asks for).
     */
    const converge = async (budgetMs: number, final: boolean) => {
      const until = w.clock.now() + budgetMs;
      let last = '';
      let since = w.clock.now();
      for (let i = 0; i < MAX_CONVERGE_STEPS && w.clock.now() < until; i++) {
        if (unsettled(w, tracked, final, trackedSnapshots, trackedGroups).length === 0 && heldBack.length === 0) return;
        const now = fingerprint();
        if (now !== last) {
          last = now;
          since = w.clock.now();
        } else if (w.clock.now() - since >= STUCK_MS) {
          log('stuck');
          return;
        }
        await forwarderStep(1000, 5000);
      }
    };

    // Active steps.
    for (let s = 0; s < scenario.activeSteps; s++) {
      const actions = scenario.actions[s] ?? [];
      const all = async () => {
        for (const action of actions) await performOrHold(action);
      };
      if (scenario.midFlight[s]) await forwarderStep(500, 4000, all);
      else {
        await all();
        await forwarderStep(500, 4000);
      }
    }
    // Checkpoint: the live state must converge.
    log('checkpoint');
    await converge(options.liveBudgetMs ?? 240_000, false);
    const atCheckpoint = [
      ...unsettled(w, tracked, false, trackedSnapshots, trackedGroups),
      ...heldBack.map((a) => `user ${describeAction(a)} still held back`),
    ].map((p) => `at checkpoint (step ${step}): ${p}`);
    for (const action of heldBack.splice(0)) {
      log(`user ${describeAction(action)} given up`);
      // A restore never asked for is no claim to judge.
      if (action.kind === 'createClaim') (tracked.find((t) => t.name === action.claim) as TrackedClaim).deleted = true;
    }
    // Teardown: pods, then (after a gap) claims.
    log('teardown');
    for (const pod of w.store.list('pods', { namespace: NAMESPACE }).items) ignoreNotFound(() => w.store.delete('pods', pod.metadata.name, NAMESPACE));
    await w.settle();
    for (let g = 0; g < scenario.teardownGap; g++) await forwarderStep(500, 4000);
    for (const c of tracked) {
      if (c.deleted || !c.uid) continue;
      c.deleted = true;
      ignoreNotFound(() => w.store.delete('persistentvolumeclaims', c.name, NAMESPACE));
    }
    for (const v of trackedSnapshots) {
      v.deleted = true;
      ignoreNotFound(() => w.store.delete('volumesnapshots', v.name, NAMESPACE));
    }
    for (const g of trackedGroups) {
      if (g.deleted) continue;
      g.deleted = true;
      if (g.uid) ignoreNotFound(() => w.store.delete('volumegroupsnapshots', g.name, NAMESPACE));
    }
    await w.settle();
    await converge(options.finalBudgetMs ?? 360_000, true);
    for (let extra = 0; extra < 2; extra++) await forwarderStep(1000, 5000);
    // The user takes over some Retain disks (the Kubernetes docs' way to re-use one begins so):
    // the Released PV deleted, the disk left theirs. No audit may delete it (the oracle says so).
    for (const c of tracked) {
      if (c.class.policy !== 'Retain' || !c.deleted || !c.uid) continue;
      const pv = w.store.get('persistentvolumes', `pvc-${c.uid}`) as Pv | undefined;
      const disk = pv && diskIdOf(pv);
      if (!pv || !disk || pv.status?.phase !== 'Released' || pv.metadata.deletionTimestamp || !runtime.chance(TAKE_OVER_CHANCE)) continue;
      c.takenOver = disk;
      oracle.takenOver.add(disk);
      log(`user deletes the Released PV of ${c.name} (Retain): its disk ${disk} is theirs`);
      ignoreNotFound(() => w.store.delete('persistentvolumes', pv.metadata.name));
    }
    // The static PVs go too (deleted by the user, Released): the disks were never volhook's to delete,
    // and this cluster's stays the user's.
    for (const c of tracked) {
      if (!c.static || !c.deleted) continue;
      const pv = w.store.get('persistentvolumes', c.static.pv) as Pv | undefined;
      if (!pv || pv.status?.phase !== 'Released' || pv.metadata.deletionTimestamp) continue;
      if (c.static.disk === 'unadopted') {
        c.takenOver = c.static.volumeId;
        oracle.takenOver.add(c.static.volumeId);
      }
      log(`user deletes the static PV ${c.static.pv} of ${c.name}: its disk ${c.static.volumeId} stays`);
      ignoreNotFound(() => w.store.delete('persistentvolumes', c.static!.pv));
    }
    await w.settle();
    // The scheduled audit's turn at the end, after a forwarder resync (the report it judges by
    // is at most one resync old, as with the hourly schedule and 5-minute resyncs), and once the
    // last leftover is older than any grace it may run with: an hourly audit always meets one so.
    // A leftover may fire during this wait itself (a crash plan due late), hence the bound read anew.
    const resyncFrom = w.clock.now();
    while (w.clock.now() < Math.max(resyncFrom, lastLeftoverAt + Math.max(...AUDIT_GRACES_MS)) + FINAL_RESYNC_MS) await forwarderStep(5000, 10000);
    // Two consecutive audits, its two phases: the first marks; the second, once the backend
    // holds a report received after the mark, deletes what that report still does not name.
    await audit();
    const markedAt = w.clock.now();
    for (let i = 0; i < MAX_REPORT_WAIT_STEPS; i++) {
      const report = await w.reports.get(w.clusterId);
      if (report && reportTime(report) > markedAt) break;
      await forwarderStep(5000, 10000);
    }
    await audit();
    for (let extra = 0; extra < 2; extra++) await forwarderStep(1000, 5000);
    const atEnd = convergenceProblems(w, tracked, true, trackedSnapshots, trackedGroups).map((p) => `at end (step ${step}): ${p}`);

    const verdict = finalVerdict(w, tracked, oracle, [...atCheckpoint, ...atEnd]);
    const stats = forwarder.stats;
    const diagnostics = [
      ...stats.backendErrors.map((e) => `backend refused a request: ${e}`),
      ...stats.invalidItems.map((e) => `item not sent (contract): ${e}`),
      ...stats.writeErrors.map((e) => `write failed: ${e}`),
      ...w.controllerErrors.map((e) => `controller: ${e}`),
    ];
    const made = trackedGroups.filter((g) => g.uid && g.deleted);
    const groups: GroupFigures = {
      lifecycles: scenario.groups.length,
      split: scenario.groups.filter((g) => g.split).length,
      createSnapshots: [...oracle.createdGroups.values()].reduce((a, b) => a + b, 0),
      snapshots: [...oracle.createdGroupSnapshots.values()].reduce((n, byVolume) => n + [...byVolume.values()].reduce((m, ids) => m + ids.size, 0), 0),
      restores: tracked.filter((c) => c.fromGroup && c.uid).length,
      deletedDelete: made.filter((g) => g.policy === 'Delete').length,
      deletedRetain: made.filter((g) => g.policy === 'Retain').length,
      deletedEarly,
    };
    return {
      seed,
      scenario: describeScenario(scenario),
      groups,
      stuckGivenUp: oracle.stuckGivenUp,
      stuckGivenUpEarly: oracle.stuckGivenUpEarly,
      points: [...crashes.injected],
      counts: verdict.counts,
      findings: verdict.findings,
      steps: step,
      requests: stats.requests,
      items: stats.items,
      ms: performance.now() - started,
      traceHash: createHash('sha256').update(trace.join('\n')).digest('hex').slice(0, 16),
      trace,
      diagnostics,
    };
  } finally {
    await world?.close();
    restore();
  }
}

export function failed(report: RunReport): boolean {
  return Object.values(report.counts).some((n) => n > 0);
}
