/**
 * The pure halves of every reconciler, as tables: what was observed -> the plan. A plan is
 * summed up as its action or verdict, then its writes (`createDisk + event Normal
 * Provisioning`), so that a row reads like the rule it pins. The reconcilers' own tests drive
 * the same decisions through `converge` and the fake gateway; these show every branch.
 */
import { describe, expect, it } from 'vitest';
import type { Write } from '../../lib/contract/index.js';
import { Ec2Error, type Disk, type DiskAttachment, type Ec2ErrorKind, type Instance } from '../../lib/ec2/types.js';
import { decideAttach, refusedAttach, type AttachTarget } from '../../lib/reconcile/attach.js';
import { decideClaimDeleted } from '../../lib/reconcile/claim-deleted.js';
import { decideDetach, refusedDetach, type DetachTarget } from '../../lib/reconcile/detach.js';
import { verdictForEc2Error } from '../../lib/reconcile/outcomes.js';
import type { Ec2Action, Plan } from '../../lib/reconcile/plan.js';
import { prepareProvision } from '../../lib/reconcile/provision-job.js';
import { decideProvision, refusedProvision } from '../../lib/reconcile/provision.js';
import { decideReclaim, refusedReclaim } from '../../lib/reconcile/reclaim.js';
import { EARLY_GIVE_UP_FLOOR_MS, STUCK_ATTACHING_MS, EARLY_GIVE_UP_MS } from '../../lib/reconcile/stuck-attachment.js';
import {
  CLAIM_UID,
  claimItem,
  CLUSTER,
  DRIVER,
  INSTANCE_ID,
  NOW,
  ownedTags,
  persistentVolume,
  pvItem,
  setup,
  vaItem,
  volumeAttachment,
} from './fixtures.js';

const VOL = 'vol-0123456789abcdef0';
const ctx = { clusterId: CLUSTER, driverName: DRIVER, provisionerName: DRIVER };

/** `done`, `requeue 2s`, `failed NotOwned 300s`, or the action's verb; then ` + ` the writes. */
function summary(plan: Plan<Ec2Action>): string {
  const head =
    'action' in plan
      ? plan.action.verb + ('attempt' in plan.action && plan.action.attempt > 0 ? ` (attempt ${plan.action.attempt})` : '')
      : plan.verdict.outcome === 'done'
        ? 'done'
        : plan.verdict.outcome === 'requeue'
          ? `requeue ${plan.verdict.requeueAfterSeconds}s`
          : `failed ${plan.verdict.reason} ${plan.verdict.requeueAfterSeconds}s`;
  return plan.writes.length === 0 ? head : `${head} + ${plan.writes.map(writeSummary).join(', ')}`;
}

function writeSummary(w: Write): string {
  switch (w.op) {
    case 'createEvent':
      return `event ${w.type} ${w.reason}`;
    case 'addFinalizer':
    case 'removeFinalizer':
      return `${w.op} ${w.finalizer} on ${w.target.kind}`;
    case 'setAnnotation':
      return `setAnnotation ${w.key}=${w.value}`;
    case 'removePvcAnnotation':
      return `removePvcAnnotation ${w.annotation}`;
    case 'updateVolumeAttachmentStatus':
      return `status ${Object.entries(w.status)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => (k === 'attached' ? `attached=${v}` : k))
        .join(' ')}`;
    default:
      return w.op;
  }
}

const disk = (over: Partial<Disk> = {}): Disk => ({
  volumeId: VOL,
  zone: 'us-east-1a',
  sizeGiB: 20,
  state: 'available',
  type: 'gp3',
  encrypted: false,
  multiAttach: false,
  tags: ownedTags(),
  attachments: [],
  ...over,
});

const instance = (over: Partial<Instance> = {}): Instance => ({
  instanceId: INSTANCE_ID,
  zone: 'us-east-1a',
  state: 'running',
  tags: { [`kubernetes.io/cluster/${CLUSTER}`]: 'owned' },
  devicesInUse: ['/dev/xvda'],
  ...over,
});

const on = (instanceId: string, state: DiskAttachment['state'], attachTime?: Date): DiskAttachment => ({
  instanceId,
  device: '/dev/xvdaa',
  state,
  ...(attachTime && { attachTime: attachTime.toISOString() }),
});

const error = (kind: Ec2ErrorKind, code: string = kind) => new Ec2Error(kind, code, `EC2: ${code}`);
const OTHER_INSTANCE = 'i-0ccccccccccccccc3';
const { [`kubernetes.io/cluster/${CLUSTER}`]: _ours, ...unowned } = ownedTags();
/** The tags of a volume another cluster (`beta`) created under the same name. */
const OTHER_CLUSTER_TAGS = { ...unowned, 'kubernetes.io/cluster/beta': 'owned' };
/** The cluster's, but not adopted: without `ebs.csi.aws.com/cluster=true`, which IAM requires on any change. */
const { 'ebs.csi.aws.com/cluster': _adopted, ...NOT_ADOPTED_TAGS } = ownedTags();

describe('decideProvision: the claim\'s disk -> plan', () => {
  const prepared = prepareProvision(claimItem(), setup().ctx);
  if (!('job' in prepared)) throw new Error('the default claim must make a job');
  const { job } = prepared;
  const provisioned = 'done + createPersistentVolume, removeFinalizer volhook.io/provisioning-protection on PersistentVolumeClaim, event Normal ProvisioningSucceeded';

  it.each<[string, string, Disk | undefined, boolean]>([
    ['no disk', 'createDisk + event Normal Provisioning', undefined, false],
    ['creating', 'requeue 2s', disk({ state: 'creating' }), false],
    ['available', provisioned, disk(), false],
    ['in-use (attached already, e.g. by hand)', provisioned, disk({ state: 'in-use' }), false],
    ['error (failed to create)', 'deleteDisk + event Warning ProvisioningFailed', disk({ state: 'error' }), false],
    ['error, not adopted', 'failed NotAdopted 300s + event Normal Provisioning, event Warning ProvisioningFailed', disk({ state: 'error', tags: NOT_ADOPTED_TAGS }), false],
    ['deleting, deleted by this request for failing', 'failed VolumeCreationFailed 60s', disk({ state: 'deleting' }), true],
    ['deleting, not by this request', 'createDisk', disk({ state: 'deleting' }), false],
    ['deleted', 'createDisk', disk({ state: 'deleted' }), false],
  ])('%s -> %s', (_situation, plan, observed, deletedFailed) => {
    expect(summary(decideProvision(job, { disk: observed, deletedFailed }, ctx))).toBe(plan);
  });

  it('available -> the PV names the disk, in its zone', () => {
    const plan = decideProvision(job, { disk: disk({ zone: 'us-east-1a' }) }, ctx);
    const pv = plan.writes.find((w) => w.op === 'createPersistentVolume');
    expect(pv?.op === 'createPersistentVolume' && pv.pv.spec.csi?.volumeHandle).toBe(VOL);
  });

  const wffc = { ...job, waitForFirstConsumer: true };
  it.each<[string, string, typeof job, 'createDisk' | 'deleteDisk', Ec2Error]>([
    ['CreateVolume token used with other parameters', 'failed IdempotentParameterMismatch 60s + event Warning ProvisioningFailed', job, 'createDisk', error('idempotentMismatch')],
    ['CreateVolume out of capacity, Immediate', 'failed InsufficientVolumeCapacity 60s + event Warning ProvisioningFailed', job, 'createDisk', error('capacity')],
    ['CreateVolume out of capacity, WaitForFirstConsumer', 'failed InsufficientVolumeCapacity 60s + event Warning ProvisioningFailed, removePvcAnnotation volume.kubernetes.io/selected-node', wffc, 'createDisk', error('capacity')],
    ['CreateVolume refuses a parameter', 'failed InvalidParameter 300s + event Warning ProvisioningFailed', job, 'createDisk', error('invalidParameter')],
    ['CreateVolume not allowed', 'failed UnauthorizedOperation 300s + event Warning ProvisioningFailed', job, 'createDisk', error('unauthorized')],
    ['the created volume vanished', 'failed NotFound 60s + event Warning ProvisioningFailed', job, 'createDisk', error('notFound')],
    ['DeleteVolume of the failed volume: still attached', 'requeue 10s', job, 'deleteDisk', error('inUse')],
  ])('refused: %s -> %s', (_situation, plan, theJob, verb, err) => {
    const action = verb === 'createDisk' ? ({ verb, request: theJob.request } as const) : ({ verb, volumeId: VOL } as const);
    expect(summary(refusedProvision(theJob, action, err, verdictForEc2Error(err, verb)))).toBe(plan);
  });

  it('refused: the created volume vanished -> the Warning says so', () => {
    const err = error('notFound');
    const plan = refusedProvision(job, { verb: 'createDisk', request: job.request }, err, verdictForEc2Error(err, 'createDisk'));
    expect(plan.verdict).toMatchObject({ message: expect.stringMatching(/^the volume vanished right after it was created/) });
  });
});

describe('decideReclaim: the Released PV\'s disk -> plan', () => {
  const pv = pvItem({ pv: persistentVolume({ status: { phase: 'Released' } }) }).pv;
  const gone = 'done + deletePersistentVolume, removeFinalizer external-provisioner.volume.kubernetes.io/finalizer on PersistentVolume';

  it.each<[string, string, Disk | undefined]>([
    ['no such volume', gone, undefined],
    ['deleting', gone, disk({ state: 'deleting' })],
    ['deleted', gone, disk({ state: 'deleted' })],
    ['owned by another cluster', 'failed NotOwned 300s + event Warning VolumeFailedDelete', disk({ tags: OTHER_CLUSTER_TAGS })],
    ['owned, not adopted', 'failed NotAdopted 300s + event Warning VolumeFailedDelete', disk({ tags: NOT_ADOPTED_TAGS })],
    ['in-use', 'requeue 10s + event Warning VolumeFailedDelete', disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attached')] })],
    ['available but an attachment still listed', 'requeue 10s + event Warning VolumeFailedDelete', disk({ attachments: [on(INSTANCE_ID, 'detaching')] })],
    ['creating', 'requeue 2s', disk({ state: 'creating' })],
    ['available', 'deleteDisk', disk()],
    ['error', 'deleteDisk', disk({ state: 'error' })],
  ])('%s -> %s', (_situation, plan, observed) => {
    expect(summary(decideReclaim(pv, { disk: observed }, CLUSTER))).toBe(plan);
  });

  it('a PV without the provisioner finalizer, disk gone -> only its deletion', () => {
    const bare = pvItem({ pv: persistentVolume({ metadata: { finalizers: ['kubernetes.io/pv-protection'] }, status: { phase: 'Released' } }) }).pv;
    expect(summary(decideReclaim(bare, { disk: undefined }, CLUSTER))).toBe('done + deletePersistentVolume');
  });

  it.each<[string, string, Ec2Error]>([
    ['still attached', 'requeue 10s + event Warning VolumeFailedDelete', error('inUse')],
    ['volume in transition', 'requeue 2s + event Warning VolumeFailedDelete', error('incorrectState')],
    ['not allowed', 'failed UnauthorizedOperation 300s + event Warning VolumeFailedDelete', error('unauthorized')],
  ])('refused DeleteVolume: %s -> %s', (_situation, plan, err) => {
    expect(summary(refusedReclaim(pv, verdictForEc2Error(err, 'deleteDisk')))).toBe(plan);
  });

  it('refused with a done verdict -> done, no Warning', () => {
    expect(summary(refusedReclaim(pv, { outcome: 'done' }))).toBe('done');
  });
});

describe('decideClaimDeleted: the released claim\'s disk -> plan', () => {
  const released = { uid: CLAIM_UID, namespace: 'shop', name: 'data' };

  it.each<[string, string, Disk | undefined]>([
    ['no volume', 'done', undefined],
    ['deleting', 'done', disk({ state: 'deleting' })],
    ['deleted', 'done', disk({ state: 'deleted' })],
    ['made for another claim name', 'failed NotOwned 300s', disk({ tags: ownedTags({ 'kubernetes.io/created-for/pvc/name': 'other' }) })],
    ['made in another namespace', 'failed NotOwned 300s', disk({ tags: ownedTags({ 'kubernetes.io/created-for/pvc/namespace': 'other' }) })],
    ['owned by another cluster', 'failed NotOwned 300s', disk({ tags: OTHER_CLUSTER_TAGS })],
    ['made for this claim, not adopted', 'failed NotAdopted 300s', disk({ tags: NOT_ADOPTED_TAGS })],
    ['creating', 'requeue 2s', disk({ state: 'creating' })],
    ['in-use', 'requeue 10s', disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attached')] })],
    ['available but an attachment still listed', 'requeue 10s', disk({ attachments: [on(INSTANCE_ID, 'detaching')] })],
    ['available', 'deleteDisk', disk()],
    ['error', 'deleteDisk', disk({ state: 'error' })],
  ])('%s -> %s', (_situation, plan, observed) => {
    expect(summary(decideClaimDeleted(released, { disk: observed }, CLUSTER))).toBe(plan);
  });
});

describe('decideAttach: volume and instance -> plan', () => {
  /** The default VolumeAttachment, its attachment recorded; `over` overrides its item. */
  const targetOf = (over: object = {}): AttachTarget => {
    const item = vaItem(over);
    return { va: item.volumeAttachment, pv: item.pv!, volumeId: VOL, instanceId: INSTANCE_ID, nodeName: item.volumeAttachment.spec.nodeName };
  };
  const target = targetOf();
  const attachError = 'status attached=false attachError';
  const attachedStatus = 'status attached=true attachmentMetadata';
  const longAgo = new Date(NOW.getTime() - STUCK_ATTACHING_MS - 1_000);
  const justNow = new Date(NOW.getTime() - 10_000);
  const twentyAgo = new Date(NOW.getTime() - 20_000);

  it.each<[string, string, object, Disk | undefined, Instance | undefined]>([
    ['no volume', `failed VolumeNotFound 60s + ${attachError}`, {}, undefined, instance()],
    ['no instance', `failed InstanceNotFound 60s + ${attachError}`, {}, disk(), undefined],
    ['volume of another cluster', `failed NotOwned 300s + ${attachError}`, {}, disk({ tags: OTHER_CLUSTER_TAGS }), instance()],
    ['instance of another cluster', `failed NotOwned 300s + ${attachError}`, {}, disk(), instance({ tags: { 'kubernetes.io/cluster/beta': 'owned' } })],
    ['volume not adopted', `failed NotAdopted 300s + ${attachError}, event Warning FailedAttachVolume`, {}, disk({ tags: NOT_ADOPTED_TAGS }), instance()],
    ['volume not adopted, attached here already (nothing for EC2 to do)', `done + ${attachedStatus}`, {}, disk({ tags: NOT_ADOPTED_TAGS, state: 'in-use', attachments: [on(INSTANCE_ID, 'attached')] }), instance()],
    ['volume not adopted, attaching here for too long', `failed NotAdopted 300s + ${attachError}, event Warning FailedAttachVolume`, {}, disk({ tags: NOT_ADOPTED_TAGS, state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', longAgo)] }), instance()],
    ['volume in another zone', `failed ZoneMismatch 300s + ${attachError}`, {}, disk({ zone: 'us-east-1b' }), instance()],
    ['nothing recorded yet', 'requeue 0s + addFinalizer external-attacher/ebs-csi-aws-com on PersistentVolume, addFinalizer external-attacher/ebs-csi-aws-com on VolumeAttachment, setAnnotation csi.alpha.kubernetes.io/node-id=i-0aaaaaaaaaaaaaaa1', { volumeAttachment: { metadata: { annotations: undefined, finalizers: undefined } }, pv: persistentVolume() }, disk(), instance()],
    ['attached here', `done + ${attachedStatus}`, {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attached')] }), instance()],
    ['busy here', `done + ${attachedStatus}`, {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'busy')] }), instance()],
    ['attached here, status already says so', 'done', { volumeAttachment: volumeAttachment({ status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdaa' } } }) }, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attached')] }), instance()],
    ['attaching here for 10 s (past the usual 2.5 s: due)', 'requeue 0.25s', {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', justNow)] }), instance()],
    ['attaching here for too long', `detachDisk + ${attachError}`, {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', longAgo)] }), instance()],
    ['attaching here for 10 s, a later attach to the instance finished (too soon to tell)', 'requeue 0.25s', {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', justNow)] }), instance({ mappings: [{ volumeId: 'vol-later', state: 'attached', attachTime: new Date(justNow.getTime() + 1_000).toISOString() }] })],
    ['attaching here for 20 s, a later attach to the instance finished', `detachDisk + ${attachError}`, {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', twentyAgo)] }), instance({ mappings: [{ volumeId: 'vol-later', state: 'attached', attachTime: new Date(twentyAgo.getTime() + 1_000).toISOString() }] })],
    ['attaching here for 20 s, the later attach to the instance still attaching too', 'requeue 0.25s', {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', twentyAgo)] }), instance({ mappings: [{ volumeId: 'vol-later', state: 'attaching', attachTime: new Date(twentyAgo.getTime() + 1_000).toISOString() }] })],
    ['attaching here for 20 s, an earlier attach finished, no other in flight', `detachDisk + ${attachError}`, {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', twentyAgo)] }), instance({ mappings: [{ volumeId: 'vol-earlier', state: 'attached', attachTime: new Date(twentyAgo.getTime() - 1_000).toISOString() }] })],
    ['attaching here for 20 s, an earlier attach finished, another earlier one still attaching', 'requeue 0.25s', {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', twentyAgo)] }), instance({ mappings: [{ volumeId: 'vol-earlier', state: 'attached', attachTime: new Date(twentyAgo.getTime() - 1_000).toISOString() }, { volumeId: 'vol-queued', state: 'attaching', attachTime: new Date(twentyAgo.getTime() - 500).toISOString() }] })],
    ['attaching here for 20 s, nothing else known on the instance', 'requeue 0.25s', {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', twentyAgo)] }), instance()],
    ['detaching from here', 'requeue 2s', {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'detaching')] }), instance()],
    ['attached elsewhere', `failed AttachedElsewhere 60s + ${attachError}`, {}, disk({ state: 'in-use', attachments: [on(OTHER_INSTANCE, 'attached')] }), instance()],
    ['detaching from elsewhere', 'requeue 2s', {}, disk({ state: 'in-use', attachments: [on(OTHER_INSTANCE, 'detaching')] }), instance()],
    ['multi-attach, attached elsewhere', 'attachDisk', {}, disk({ state: 'in-use', multiAttach: true, attachments: [on(OTHER_INSTANCE, 'attached')] }), instance()],
    ['creating', 'requeue 2s', {}, disk({ state: 'creating' }), instance()],
    ['error', `failed VolumeNotAvailable 60s + ${attachError}`, {}, disk({ state: 'error' }), instance()],
    ['available', 'attachDisk', {}, disk(), instance()],
  ])('%s -> %s', (_situation, plan, over, observedDisk, observedInstance) => {
    expect(summary(decideAttach(targetOf(over), { disk: observedDisk, instance: observedInstance, now: NOW }, ctx))).toBe(plan);
  });

  it('a simulator at time scale 10: attaching for a tenth of the stuck window and more -> detached; for less -> waited on (at scale 1 both wait)', () => {
    const attaching = (msAgo: number) => disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', new Date(NOW.getTime() - msAgo))] });
    const scaled = { ...ctx, ec2TimeScale: 10 };
    expect(summary(decideAttach(target, { disk: attaching(STUCK_ATTACHING_MS / 10 + 1_000), instance: instance(), now: NOW }, scaled))).toBe(`detachDisk + ${attachError}`);
    expect(summary(decideAttach(target, { disk: attaching(STUCK_ATTACHING_MS / 10 - 1_000), instance: instance(), now: NOW }, scaled))).toMatch(/^requeue/);
    expect(summary(decideAttach(target, { disk: attaching(STUCK_ATTACHING_MS / 10 + 1_000), instance: instance(), now: NOW }, ctx))).toMatch(/^requeue/);
  });

  it('a simulator at time scale 10: attaching past the 2 s floor (more than a tenth of 15 s) behind a later attach finished -> detached; short of it -> waited on', () => {
    const began = (msAgo: number) => new Date(NOW.getTime() - msAgo);
    const behind = (msAgo: number) => ({
      disk: disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', began(msAgo))] }),
      instance: instance({ mappings: [{ volumeId: 'vol-later', state: 'attached', attachTime: began(msAgo - 500).toISOString() }] }),
      now: NOW,
    });
    const scaled = { ...ctx, ec2TimeScale: 10 };
    expect(summary(decideAttach(target, behind(EARLY_GIVE_UP_FLOOR_MS + 500), scaled))).toBe(`detachDisk + ${attachError}`);
    // Past a tenth of 15 s, short of the floor: the simulator may only be busy.
    expect(summary(decideAttach(target, behind(EARLY_GIVE_UP_MS / 10 + 300), scaled))).toMatch(/^requeue/);
    expect(summary(decideAttach(target, behind(EARLY_GIVE_UP_MS / 10 - 1_000), scaled))).toMatch(/^requeue/);
  });

  it('the detach of a stuck attachment says why in the VolumeAttachment error: how long, and the later attach that finished', () => {
    const plan = decideAttach(
      target,
      {
        disk: disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', twentyAgo)] }),
        instance: instance({ mappings: [{ volumeId: 'vol-later', state: 'attached', attachTime: new Date(twentyAgo.getTime() + 1_000).toISOString() }] }),
        now: NOW,
      },
      ctx,
    );
    const status = plan.writes.find((w) => w.op === 'updateVolumeAttachmentStatus');
    expect(status?.op === 'updateVolumeAttachmentStatus' && status.status.attachError).toMatchObject({
      message: expect.stringMatching(new RegExp(`^volume ${VOL} stuck attaching to instance ${INSTANCE_ID} as /dev/xvdaa for 20 s behind a later attach \\(vol-later, attaching since .*, is attached\\); given up early, detached to be attached again$`)),
      errorCode: 13,
    });
  });

  it('given up early once already (its error says so) -> the next attempt waits the full 90 s; a different error before -> given up early', () => {
    const observed = {
      disk: disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', twentyAgo)] }),
      instance: instance({ mappings: [{ volumeId: 'vol-later', state: 'attached', attachTime: new Date(twentyAgo.getTime() + 1_000).toISOString() }] }),
      now: NOW,
    };
    const first = decideAttach(target, observed, ctx);
    const status = first.writes.find((w) => w.op === 'updateVolumeAttachmentStatus');
    if (status?.op !== 'updateVolumeAttachmentStatus') throw new Error('no attachError written');
    const erred = (message: string) => targetOf({ volumeAttachment: volumeAttachment({ status: { attached: false, attachError: { message, time: NOW.toISOString() } } }) });
    expect(summary(decideAttach(erred(status.status.attachError!.message!), observed, ctx))).toBe('requeue 0.25s');
    expect(summary(decideAttach(erred('volume vol-x is attached to instance i-other'), observed, ctx))).toMatch(/^detachDisk/);
    const old = { ...observed, disk: disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', longAgo)] }) };
    expect(summary(decideAttach(erred(status.status.attachError!.message!), old, ctx))).toMatch(/^detachDisk/);
  });

  it('available, every device name taken -> failed NoDeviceName', () => {
    expect(summary(decideAttach(target, { disk: disk(), instance: instance(), now: NOW, noFreeDevice: true }, ctx))).toBe(
      `failed NoDeviceName 60s + ${attachError}`,
    );
  });

  const attach = (attempt: number) => ({ verb: 'attachDisk' as const, volumeId: VOL, instanceId: INSTANCE_ID, attempt });
  it.each<[string, string, ReturnType<typeof attach> | { verb: 'detachDisk'; volumeId: string; instanceId: string }, Ec2Error]>([
    ['device name in use, first try', 'attachDisk (attempt 1)', attach(0), error('deviceInUse')],
    ['device name in use, last try', 'requeue 2s', attach(3), error('deviceInUse')],
    ['no attachment slot left', `failed AttachmentLimitExceeded 60s + ${attachError}`, attach(0), error('attachmentLimit')],
    ['volume attached to another instance', `failed VolumeInUse 60s + ${attachError}`, attach(0), error('inUse')],
    ['DetachVolume of a stuck attach: in transition', 'requeue 2s', { verb: 'detachDisk', volumeId: VOL, instanceId: INSTANCE_ID }, error('incorrectState')],
  ])('refused: %s -> %s', (_situation, plan, action, err) => {
    expect(summary(refusedAttach(target, action, err, verdictForEc2Error(err, action.verb), NOW))).toBe(plan);
  });
});

describe('decideDetach: volume and instance -> plan', () => {
  const va = vaItem({ volumeAttachment: volumeAttachment({ metadata: { deletionTimestamp: '2025-03-01T11:59:00Z' }, status: { attached: true } }) }).volumeAttachment;
  const target: DetachTarget = { va, volumeId: VOL, instanceId: INSTANCE_ID };
  const detached = 'done + status attached=false, removeFinalizer external-attacher/ebs-csi-aws-com on VolumeAttachment';
  const detachError = 'status attached=true detachError';

  it.each<[string, string, Partial<DetachTarget>, Disk | undefined, Instance | undefined]>([
    ['no volume', detached, {}, undefined, instance()],
    ['volume deleting', detached, {}, disk({ state: 'deleting' }), instance()],
    ['instance unknown, volume attached nowhere', detached, { instanceId: undefined }, disk(), undefined],
    ['instance unknown, volume attached somewhere', `failed InstanceUnknown 300s + ${detachError}`, { instanceId: undefined }, disk({ state: 'in-use', attachments: [on(OTHER_INSTANCE, 'attached')] }), undefined],
    ['instance gone', detached, {}, disk(), undefined],
    ['volume of another cluster', `failed NotOwned 300s + ${detachError}`, {}, disk({ tags: OTHER_CLUSTER_TAGS, attachments: [on(INSTANCE_ID, 'attached')] }), instance()],
    ['volume not adopted, attached here', `failed NotAdopted 300s + ${detachError}`, {}, disk({ tags: NOT_ADOPTED_TAGS, state: 'in-use', attachments: [on(INSTANCE_ID, 'attached')] }), instance()],
    ['volume not adopted, attached here, the PV known', `failed NotAdopted 300s + ${detachError}, event Warning FailedDetachVolume`, { pv: vaItem().pv! }, disk({ tags: NOT_ADOPTED_TAGS, state: 'in-use', attachments: [on(INSTANCE_ID, 'attached')] }), instance()],
    ['volume not adopted, not attached here (nothing for EC2 to do)', detached, {}, disk({ tags: NOT_ADOPTED_TAGS }), instance()],
    ['not attached here', detached, {}, disk({ state: 'in-use', attachments: [on(OTHER_INSTANCE, 'attached')] }), instance()],
    ['detaching from here', 'requeue 2s', {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'detaching')] }), instance()],
    ['attached here', 'detachDisk', {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attached')] }), instance()],
    ['attaching here', 'detachDisk', {}, disk({ state: 'in-use', attachments: [on(INSTANCE_ID, 'attaching', NOW)] }), instance()],
  ])('%s -> %s', (_situation, plan, over, observedDisk, observedInstance) => {
    expect(summary(decideDetach({ ...target, ...over }, { disk: observedDisk, instance: observedInstance, now: NOW }, ctx))).toBe(plan);
  });

  it.each<[string, string, Ec2Error]>([
    ['in transition', 'requeue 2s', error('incorrectState')],
    ['not allowed', `failed UnauthorizedOperation 300s + ${detachError}`, error('unauthorized')],
  ])('refused DetachVolume: %s -> %s', (_situation, plan, err) => {
    expect(summary(refusedDetach(va, verdictForEc2Error(err, 'detachDisk'), NOW))).toBe(plan);
  });
});
