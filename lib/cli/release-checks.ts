/**
 * Whether a cluster's EBS objects are as external-provisioner and external-attacher expect
 * them, once the EBS CSI controller takes them back — pure, from one read of the cluster. Read
 * in their sources (external-provisioner v6 with sig-storage-lib-external-provisioner v13,
 * external-attacher v4):
 *
 * - external-provisioner runs with `AddFinalizer(true)` and `kubernetes.io/aws-ebs` as an
 *   additional provisioner name. It takes a PV as its own when `pv.kubernetes.io/provisioned-by`
 *   names one of those (or `pv.kubernetes.io/migrated-to` does, or, without provisioned-by, its
 *   `csi.driver` is the driver). On such a PV with the Delete policy it adds its finalizer
 *   `external-provisioner.volume.kubernetes.io/finalizer` only while the PV is Bound and not
 *   being deleted; a PV deleted without it is gone without DeleteVolume. It writes `csi.fsType`
 *   (the class's, else `--default-fstype`, ext4 in the EBS chart) on all but Block PVs, and the
 *   node affinity from the driver's topology (`topology.ebs.csi.aws.com/zone`, or
 *   `topology.kubernetes.io/zone`). It reads a claim's `volume.kubernetes.io/storage-provisioner`
 *   (or `migrated-to`) to know the claim is the driver's.
 * - external-attacher takes a VolumeAttachment that says `attached: true` as done, and one
 *   without its finalizer `external-attacher/ebs-csi-aws-com` as detached: deleting an attached
 *   one without the finalizer skips ControllerUnpublish, and the disk stays on the node. It
 *   keeps the same finalizer on the PV while a VolumeAttachment uses it, and records the node's
 *   ID (the EC2 instance) in `csi.alpha.kubernetes.io/node-id` before attaching, to detach after
 *   the Node or its CSINode is gone. An in-tree PV whose `pv.kubernetes.io/migrated-to` is not
 *   the driver is one CSI migration does not serve: it removes its finalizer from it.
 * - The EBS CSI driver takes only `vol-…` IDs as volume handles.
 *
 * Fixed under --apply are the marks volhook writes itself and whose adding is safe: the
 * finalizers (they only make a deletion wait for the detach or DeleteVolume the sidecar does
 * anyway) and the node-id annotation (from the node's CSINode, as the attacher reads it). A
 * finalizer is never added to an object being deleted (the API server refuses it). The rest
 * is reported: an immutable field (volume handle, fsType, node affinity), or a mark other
 * controllers write (provisioned-by, migrated-to, storage-provisioner).
 */
import { Annotations, EBS_DRIVER, Finalizers, IN_TREE_EBS_PLUGIN, TopologyKeys, type ObjectRef, type Write } from '../contract/index.js';
import { ebsVolumeId } from './adopt-pvs.js';
import type { ClusterView, ReleaseAttachment, ReleasePv } from './release-view.js';

export interface Finding {
  target: ObjectRef & { uid: string };
  /** What a sidecar expects that is not so, and what it then does. */
  problem: string;
  /** The write that makes it so, when release makes it (with --apply). */
  fix?: Write;
  /** What the fix does, or who else can make it right. */
  action: string;
}

const ATTACHER = Finalizers.attacher(EBS_DRIVER);
const KNOWN_PROVISIONERS: ReadonlySet<string> = new Set([EBS_DRIVER, IN_TREE_EBS_PLUGIN]);
const CSI_ZONE_KEYS: ReadonlySet<string> = new Set([TopologyKeys.ebsZone, TopologyKeys.wellKnownZone]);
const IN_TREE_ZONE_KEYS: ReadonlySet<string> = new Set([TopologyKeys.ebsZone, TopologyKeys.wellKnownZone, TopologyKeys.betaZone]);

const pvTarget = (pv: ReleasePv) => ({ kind: 'PersistentVolume' as const, name: pv.metadata.name, uid: pv.metadata.uid });
const vaTarget = (va: ReleaseAttachment) => ({ kind: 'VolumeAttachment' as const, name: va.metadata.name, uid: va.metadata.uid });

/** A PV of the driver: `csi.driver: ebs.csi.aws.com`, or an in-tree `awsElasticBlockStore` one. */
export function isEbsPv(pv: ReleasePv): boolean {
  return pv.spec.csi?.driver === EBS_DRIVER || !!pv.spec.awsElasticBlockStore;
}

/** external-provisioner's `isProvisionerForVolume`, for the driver with the in-tree name added. */
function provisionerTakes(pv: ReleasePv): boolean {
  const annotations = pv.metadata.annotations ?? {};
  const by = annotations[Annotations.provisionedBy];
  const migratedTo = annotations[Annotations.migratedTo] ?? '';
  if (by !== undefined) return KNOWN_PROVISIONERS.has(by) || KNOWN_PROVISIONERS.has(migratedTo);
  return pv.spec.csi ? pv.spec.csi.driver === EBS_DRIVER : KNOWN_PROVISIONERS.has(migratedTo);
}

/** Provisioned by the driver (or the in-tree plugin it took over): provisioned-by names it. */
function isDynamic(pv: ReleasePv): boolean {
  return KNOWN_PROVISIONERS.has(pv.metadata.annotations?.[Annotations.provisionedBy] ?? '');
}

/** Pure: every finding on the cluster's EBS PVs, their VolumeAttachments and their claims, in object order. */
export function checkForSidecars(view: ClusterView): Finding[] {
  const volumes = view.volumes.filter(isEbsPv);
  const byName = new Map(volumes.map((pv) => [pv.metadata.name, pv]));
  const findings: Finding[] = [];
  for (const pv of volumes) findings.push(...checkPv(pv));
  const nodeIds = new Map(view.csiNodes.map((n) => [n.metadata.name, n.spec.drivers?.find((d) => d.name === EBS_DRIVER)?.nodeID ?? undefined]));
  const pvsNeedingAttacher = new Set<string>();
  for (const va of view.attachments.filter((a) => a.spec.attacher === EBS_DRIVER)) {
    findings.push(...checkAttachment(va, nodeIds.get(va.spec.nodeName)));
    const used = va.status?.attached === true || (va.metadata.finalizers ?? []).includes(ATTACHER);
    const pvName = va.spec.source.persistentVolumeName;
    if (used && pvName) {
      if (!byName.has(pvName) && !view.volumes.some((pv) => pv.metadata.name === pvName)) {
        findings.push({ target: vaTarget(va), problem: `names PV ${pvName}, which does not exist: external-attacher cannot find its volume handle`, action: 'report only' });
      } else pvsNeedingAttacher.add(pvName);
    }
  }
  for (const name of [...pvsNeedingAttacher].sort()) {
    const pv = byName.get(name);
    if (!pv || (pv.metadata.finalizers ?? []).includes(ATTACHER)) continue;
    const problem = `a VolumeAttachment uses it but it lacks the finalizer ${ATTACHER}: the PV could be deleted while attached`;
    findings.push(
      pv.metadata.deletionTimestamp
        ? { target: pvTarget(pv), problem, action: 'report only: it is being deleted, no finalizer can be added' }
        : { target: pvTarget(pv), problem, fix: { op: 'addFinalizer', target: pvTarget(pv), finalizer: ATTACHER }, action: `add ${ATTACHER}, as external-attacher does before attaching` },
    );
  }
  findings.push(...checkClaims(view, byName));
  return findings;
}

function checkPv(pv: ReleasePv): Finding[] {
  const findings: Finding[] = [];
  const target = pvTarget(pv);
  const report = (problem: string, action: string) => findings.push({ target, problem, action });
  const annotations = pv.metadata.annotations ?? {};
  const by = annotations[Annotations.provisionedBy];
  const { csi, awsElasticBlockStore: inTree, claimRef } = pv.spec;

  if (by !== undefined && !provisionerTakes(pv)) {
    report(`${Annotations.provisionedBy} is "${by}", not ${EBS_DRIVER} nor ${IN_TREE_EBS_PLUGIN}: external-provisioner leaves its reclaim to "${by}"`, 'report only');
  } else if (by === undefined && claimRef?.uid && pv.metadata.name === `pvc-${claimRef.uid}`) {
    report(`named as provisioned for its claim, but without ${Annotations.provisionedBy}: external-provisioner takes it for a static PV`, 'report only: external-provisioner writes it when it provisions');
  }

  if (pv.spec.persistentVolumeReclaimPolicy === 'Delete' && isDynamic(pv) && provisionerTakes(pv) && !(pv.metadata.finalizers ?? []).includes(Finalizers.provisioner)) {
    const problem = `reclaim policy Delete, but no finalizer ${Finalizers.provisioner}: deleted, the PV goes without its disk being deleted`;
    findings.push(
      pv.metadata.deletionTimestamp
        ? { target, problem, action: `report only: it is being deleted, no finalizer can be added; delete its disk by hand once the PV is gone` }
        : { target, problem, fix: { op: 'addFinalizer', target, finalizer: Finalizers.provisioner }, action: `add ${Finalizers.provisioner}, as volhook and external-provisioner write it` },
    );
  }

  if (csi) {
    if (!/^vol-[0-9a-f]+$/.test(csi.volumeHandle)) report(`csi.volumeHandle "${csi.volumeHandle}" is not an EBS volume ID (vol-…): the EBS CSI driver cannot attach or delete it`, 'report only: the handle cannot be changed');
    if (pv.spec.volumeMode !== 'Block' && !csi.fsType) report('no csi.fsType: the node plugin formats it with its default, ext4', 'report only: the field cannot be changed');
  } else if (inTree) {
    if (ebsVolumeId(inTree.volumeID) === undefined) report(`awsElasticBlockStore.volumeID "${inTree.volumeID}" names no EBS volume (vol-…): the EBS CSI driver cannot attach or delete it`, 'report only: the ID cannot be changed');
    if (annotations[Annotations.migratedTo] !== EBS_DRIVER) {
      report(`an in-tree PV without ${Annotations.migratedTo}: ${EBS_DRIVER}: external-attacher takes it for one CSI migration does not serve, and removes its finalizer`, 'report only: kube-controller-manager writes it, with CSI migration on');
    }
  }

  if (!hasZoneAffinity(pv)) {
    const keys = [...(csi ? CSI_ZONE_KEYS : IN_TREE_ZONE_KEYS)].join(' or ');
    report(`no zone in spec.nodeAffinity (${keys}): its pods may be scheduled in a zone the disk cannot be attached in`, 'report only: the node affinity cannot be changed');
  }
  return findings;
}

/** Every required term names the zone (an in-tree PV may name it in its labels instead). */
function hasZoneAffinity(pv: ReleasePv): boolean {
  const keys = pv.spec.csi ? CSI_ZONE_KEYS : IN_TREE_ZONE_KEYS;
  const terms = pv.spec.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  if (terms.length > 0 && terms.every((term) => (term.matchExpressions ?? []).some((e) => keys.has(e.key) && e.operator === 'In' && (e.values?.length ?? 0) > 0))) return true;
  // csi-translation-lib turns an in-tree PV's zone labels into node affinity.
  return !pv.spec.csi && Object.keys(pv.metadata.labels ?? {}).some((key) => IN_TREE_ZONE_KEYS.has(key));
}

function checkAttachment(va: ReleaseAttachment, nodeId: string | undefined): Finding[] {
  if (va.status?.attached !== true) return [];
  const findings: Finding[] = [];
  const target = vaTarget(va);
  if (!(va.metadata.finalizers ?? []).includes(ATTACHER)) {
    const problem = `attached, but without the finalizer ${ATTACHER}: external-attacher takes it for detached, and deleting it leaves the disk attached to ${va.spec.nodeName}`;
    findings.push(
      va.metadata.deletionTimestamp
        ? { target, problem, action: `report only: it is being deleted, no finalizer can be added; detach its disk by hand once the pod is gone` }
        : { target, problem, fix: { op: 'addFinalizer', target, finalizer: ATTACHER }, action: `add ${ATTACHER}, as external-attacher does before attaching` },
    );
  }
  if (!va.metadata.annotations?.[Annotations.attachedNodeId]) {
    const problem = `attached, but without ${Annotations.attachedNodeId}: external-attacher cannot detach it once node ${va.spec.nodeName} or its CSINode is gone`;
    findings.push(
      nodeId
        ? { target, problem, fix: { op: 'setAnnotation', target, key: Annotations.attachedNodeId, value: nodeId }, action: `set it to ${nodeId}, the node's ID in its CSINode` }
        : { target, problem, action: `report only: CSINode ${va.spec.nodeName} names no ID for ${EBS_DRIVER}` },
    );
  }
  return findings;
}

/** Claims bound to a PV the driver provisioned: the PV controller's provisioner annotation names the driver. */
function checkClaims(view: ClusterView, ebsPvs: ReadonlyMap<string, ReleasePv>): Finding[] {
  const findings: Finding[] = [];
  for (const claim of view.claims) {
    const pv = claim.spec.volumeName ? ebsPvs.get(claim.spec.volumeName) : undefined;
    if (!pv || !isDynamic(pv) || pv.spec.claimRef?.uid !== claim.metadata.uid) continue;
    const annotations = claim.metadata.annotations ?? {};
    const provisioner = annotations[Annotations.storageProvisioner] ?? annotations[Annotations.betaStorageProvisioner];
    if (provisioner === EBS_DRIVER || annotations[Annotations.migratedTo] === EBS_DRIVER) continue;
    findings.push({
      target: { kind: 'PersistentVolumeClaim', namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid },
      problem:
        provisioner === undefined
          ? `bound to ${pv.metadata.name}, but without ${Annotations.storageProvisioner}: ${EBS_DRIVER}`
          : `bound to ${pv.metadata.name}, but ${Annotations.storageProvisioner} is "${provisioner}" (not ${EBS_DRIVER}, and no ${Annotations.migratedTo}: ${EBS_DRIVER})`,
      action: 'report only: the PV controller writes it',
    });
  }
  return findings;
}
