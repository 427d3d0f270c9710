/**
 * The in-cluster forwarder: informers keep caches of the storage objects; events put keys of
 * our objects in the work queue; batches of due keys are built into items from the caches,
 * posted signed to the backend, and the writes of each result are applied with `applyWrites`.
 *
 * Nothing is posted before every cache has synced: an item built from a half-filled cache
 * would tell the backend a Node is gone, or that a PV has no VolumeAttachments, when neither
 * is true.
 */
import type {
  KubeConfig,
  KubernetesObject,
  V1CSINode,
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
  V1VolumeAttachment,
} from '@kubernetes/client-node';
import { Annotations, claimProvisioner, claimReleasesDisk, pvNameForClaim, type ItemInput } from '../contract/index.js';
import { isApiError, kubeClientsFromConfig } from '../kube/index.js';
import type { FetchLike } from './backend-client.js';
import { parseConfig, type ForwarderConfig, type ForwarderConfigInput } from './config.js';
import {
  isOurAttachment,
  isOurClaim,
  isOurVolume,
  isSettledAttachment,
  isSettledVolume,
  type Ownership,
} from './filter.js';
import { watchResource, type WatchedResource } from './informers.js';
import {
  buildAttachmentItem,
  buildClaimDeletedItem,
  buildClaimItem,
  buildVolumeItem,
  claimClassName,
  clusterZones,
  keys,
  parseItemKey,
  withLivePvCheck,
  type ClusterView,
  type DeletedClaim,
  type LivePvRead,
} from './items.js';
import { createJsonLogger, type Logger } from './logger.js';
import { createMetrics, type ForwarderMetrics } from './metrics.js';
import { DEFAULT_BACKOFF, WorkQueue, type Batch } from './queue.js';
import { openSecret } from './secret.js';
import { createBatchSender } from './sender.js';
import { startHealthServer } from './server.js';

export interface ForwarderDeps {
  kubeConfig: KubeConfig;
  /** Defaults to the global fetch. */
  fetch?: FetchLike;
  logger?: Logger;
}

export interface Forwarder {
  /** Stops informers, waits for requests in flight (bounded), closes the server. */
  stop(): Promise<void>;
  metrics: ForwarderMetrics;
  queue: WorkQueue<DeletedClaim>;
  /** The health/metrics port actually bound. */
  port: number;
  /** Every cache has synced. */
  ready(): boolean;
  /** Re-offers every object of ours that is not settled (also runs every `resyncSeconds`). */
  resync(): void;
}

export async function startForwarder(input: ForwarderConfigInput, deps: ForwarderDeps): Promise<Forwarder> {
  const config: ForwarderConfig = parseConfig(input);
  const logger = deps.logger ?? createJsonLogger({ level: config.logLevel });
  const fetchFn: FetchLike = deps.fetch ?? ((url, init) => fetch(url, init));
  const ownership: Ownership = { provisioner: config.provisioner, driver: config.driver };
  const clients = kubeClientsFromConfig(deps.kubeConfig);
  const secret = await openSecret({ file: config.secretFile, value: config.secret, pollMs: config.secretPollMs, logger });

  const queue = new WorkQueue<DeletedClaim>({
    batchSize: config.batchSize,
    maxInFlight: config.concurrency,
    backoff: { ...DEFAULT_BACKOFF, initialMs: config.backoffInitialMs, maxMs: config.backoffMaxMs },
  });
  const metrics = createMetrics({ queueDepth: () => queue.size });
  const shutdown = new AbortController();
  let stopping = false;

  // --- caches --------------------------------------------------------------------------
  /** PV name → names of the VolumeAttachments whose source it is. */
  const attachmentsByPv = new Map<string, Set<string>>();
  const nodeFingerprints = new Map<string, string>();
  const csiNodeFingerprints = new Map<string, string>();
  let zonesFingerprint = '';

  const common = {
    kubeConfig: deps.kubeConfig,
    restartDelayMs: config.informerRestartMs,
    logger,
    onSynced: () => {
      if (ready()) {
        zonesFingerprint = clusterZones(nodes.cache.list()).join(',');
        logger.info('all caches synced; forwarding');
        schedulePump();
      }
    },
  };
  const restarted = (resource: string) => () => metrics.informerRestarts.inc({ resource });

  const claims: WatchedResource<V1PersistentVolumeClaim> = watchResource({
    ...common,
    resource: 'persistentvolumeclaims',
    path: '/api/v1/persistentvolumeclaims',
    list: () => clients.core.listPersistentVolumeClaimForAllNamespaces(),
    onRestart: restarted('persistentvolumeclaims'),
    handlers: { add: offerClaim, update: offerClaim, delete: claimDeleted },
  });
  const volumes: WatchedResource<V1PersistentVolume> = watchResource({
    ...common,
    resource: 'persistentvolumes',
    path: '/api/v1/persistentvolumes',
    list: () => clients.core.listPersistentVolume(),
    onRestart: restarted('persistentvolumes'),
    handlers: {
      add: (pv) => volumeChanged(pv, false),
      update: (pv) => volumeChanged(pv, false),
      delete: (pv) => volumeChanged(pv, true),
    },
  });
  const attachments: WatchedResource<V1VolumeAttachment> = watchResource({
    ...common,
    resource: 'volumeattachments',
    path: '/apis/storage.k8s.io/v1/volumeattachments',
    list: () => clients.storage.listVolumeAttachment(),
    onRestart: restarted('volumeattachments'),
    handlers: {
      add: (va) => attachmentChanged(va, false),
      update: (va) => attachmentChanged(va, false),
      delete: (va) => attachmentChanged(va, true),
    },
  });
  const classes: WatchedResource<V1StorageClass> = watchResource({
    ...common,
    resource: 'storageclasses',
    path: '/apis/storage.k8s.io/v1/storageclasses',
    list: () => clients.storage.listStorageClass(),
    onRestart: restarted('storageclasses'),
    handlers: { add: classChanged, update: classChanged, delete: classChanged },
  });
  const nodes: WatchedResource<V1Node> = watchResource({
    ...common,
    resource: 'nodes',
    path: '/api/v1/nodes',
    list: () => clients.core.listNode(),
    onRestart: restarted('nodes'),
    handlers: {
      add: (node) => nodeChanged(node, false),
      update: (node) => nodeChanged(node, false),
      delete: (node) => nodeChanged(node, true),
    },
  });
  const csiNodes: WatchedResource<V1CSINode> = watchResource({
    ...common,
    resource: 'csinodes',
    path: '/apis/storage.k8s.io/v1/csinodes',
    list: () => clients.storage.listCSINode(),
    onRestart: restarted('csinodes'),
    handlers: {
      add: (csiNode) => csiNodeChanged(csiNode, false),
      update: (csiNode) => csiNodeChanged(csiNode, false),
      delete: (csiNode) => csiNodeChanged(csiNode, true),
    },
  });
  const informers: Pick<WatchedResource<KubernetesObject>, 'resource' | 'synced' | 'start' | 'stop'>[] = [
    claims,
    volumes,
    attachments,
    classes,
    nodes,
    csiNodes,
  ];

  function ready(): boolean {
    return informers.every((informer) => informer.synced);
  }

  // --- events → keys --------------------------------------------------------------------
  function offer(key: string, payload?: DeletedClaim): void {
    if (stopping) return;
    queue.add(key, payload);
    schedulePump();
  }

  function offerClaim(pvc: V1PersistentVolumeClaim): void {
    if (isOurClaim(pvc, ownership)) offer(keys.claim(pvc.metadata?.namespace ?? '', pvc.metadata?.name ?? ''));
  }

  /** A claim of ours deleted before it got a PV: the backend must not leak a disk made meanwhile. */
  function claimDeleted(pvc: V1PersistentVolumeClaim): void {
    const meta = pvc.metadata;
    if (!meta?.uid || !meta.name || !meta.namespace) return;
    if (claimProvisioner(pvc) !== ownership.provisioner || pvc.spec?.volumeName) return;
    offer(keys.claimDeleted(meta.uid), { uid: meta.uid, namespace: meta.namespace, name: meta.name });
  }

  function volumeChanged(pv: V1PersistentVolume, deleted: boolean): void {
    const name = pv.metadata?.name ?? '';
    // A PV gone for good leaves nothing to do (its reclaim happened before the delete).
    if (!deleted && isOurVolume(pv, ownership)) offer(keys.volume(name));
    // Its attachments carry the PV as context (attach is refused while it is being deleted).
    if (ready()) {
      for (const vaName of attachmentsByPv.get(name) ?? []) {
        const va = attachments.cache.get(vaName);
        if (va && isOurAttachment(va, ownership)) offer(keys.attachment(vaName));
      }
    }
  }

  function attachmentChanged(va: V1VolumeAttachment, deleted: boolean): void {
    const name = va.metadata?.name ?? '';
    const pvName = va.spec?.source?.persistentVolumeName;
    if (pvName) {
      let names = attachmentsByPv.get(pvName);
      if (deleted) {
        names?.delete(name);
        if (names?.size === 0) attachmentsByPv.delete(pvName);
      } else {
        if (!names) attachmentsByPv.set(pvName, (names = new Set()));
        names.add(name);
      }
    }
    if (!deleted && isOurAttachment(va, ownership)) offer(keys.attachment(name));
    // The PV's list of attachments changed: a Released PV may now be deletable.
    if (pvName && ready()) {
      const pv = volumes.cache.get(pvName);
      if (pv && isOurVolume(pv, ownership) && !isSettledVolume(pv)) offer(keys.volume(pvName));
    }
  }

  function classChanged(sc: V1StorageClass): void {
    if (!ready()) return; // before sync every claim is offered anyway
    const name = sc.metadata?.name;
    offerClaimsWhere((pvc) => claimClassName(pvc) === name);
  }

  function nodeChanged(node: V1Node, deleted: boolean): void {
    const name = node.metadata?.name ?? '';
    const fingerprint = deleted ? undefined : JSON.stringify([node.metadata?.labels ?? {}, node.spec?.providerID ?? '']);
    if (!remember(nodeFingerprints, name, fingerprint)) return;
    if (!ready()) return;
    offerDependentsOfNode(name);
    const zones = clusterZones(nodes.cache.list()).join(',');
    if (zones !== zonesFingerprint) {
      zonesFingerprint = zones;
      offerClaimsWhere((pvc) => {
        const className = claimClassName(pvc);
        return classes.cache.get(className ?? '')?.volumeBindingMode !== 'WaitForFirstConsumer';
      });
    }
  }

  function csiNodeChanged(csiNode: V1CSINode, deleted: boolean): void {
    const name = csiNode.metadata?.name ?? '';
    const entry = csiNode.spec?.drivers?.find((d) => d.name === ownership.driver);
    const fingerprint = deleted ? undefined : JSON.stringify(entry ?? null);
    if (!remember(csiNodeFingerprints, name, fingerprint)) return;
    if (ready()) offerDependentsOfNode(name);
  }

  function offerDependentsOfNode(nodeName: string): void {
    offerClaimsWhere((pvc) => pvc.metadata?.annotations?.[Annotations.selectedNode] === nodeName);
    for (const va of attachments.cache.list()) {
      if (va.spec?.nodeName === nodeName && isOurAttachment(va, ownership)) offer(keys.attachment(va.metadata?.name ?? ''));
    }
  }

  function offerClaimsWhere(predicate: (pvc: V1PersistentVolumeClaim) => boolean): void {
    for (const pvc of claims.cache.list()) {
      if (isOurClaim(pvc, ownership) && predicate(pvc)) offerClaim(pvc);
    }
  }

  function resync(): void {
    if (!ready() || stopping) return;
    for (const pvc of claims.cache.list()) offerClaim(pvc);
    for (const pv of volumes.cache.list()) {
      if (isOurVolume(pv, ownership) && !isSettledVolume(pv)) offer(keys.volume(pv.metadata?.name ?? ''));
    }
    for (const va of attachments.cache.list()) {
      if (isOurAttachment(va, ownership) && !isSettledAttachment(va, ownership)) offer(keys.attachment(va.metadata?.name ?? ''));
    }
  }

  // --- the queue → the backend ----------------------------------------------------------
  let pumpScheduled = false;
  let timer: NodeJS.Timeout | undefined;
  const running = new Set<Promise<void>>();

  /** Pumps on the next turn, so a burst of events (a list of 10,000) fills whole batches. */
  function schedulePump(): void {
    if (pumpScheduled || stopping) return;
    pumpScheduled = true;
    setImmediate(() => {
      pumpScheduled = false;
      pump();
    });
  }

  function pump(): void {
    if (stopping || !ready()) return;
    for (let batch = queue.take(); batch; batch = queue.take()) {
      const run = runBatch(batch).catch((err: unknown) => logger.error('batch crashed', { err }));
      running.add(run);
      void run.finally(() => running.delete(run));
    }
    clearTimeout(timer);
    timer = undefined;
    // With every request slot taken, settling a batch pumps again; no timer needed.
    if (queue.inFlight >= queue.maxInFlight) return;
    const due = queue.nextDueAt();
    if (due !== undefined) timer = setTimeout(pump, Math.max(0, due - Date.now()) + 1);
  }

  const view: ClusterView = {
    storageClass: (name) => classes.cache.get(name),
    node: (name) => nodes.cache.get(name),
    csiNode: (name) => csiNodes.cache.get(name),
    pv: (name) => volumes.cache.get(name),
    attachmentsOf: (pvName) => [...(attachmentsByPv.get(pvName) ?? [])],
    zones: () => zonesFingerprint.split(',').filter(Boolean),
  };

  const readPv: LivePvRead = async (name) => {
    try {
      await clients.core.readPersistentVolume({ name });
      return true;
    } catch (err) {
      if (isApiError(err, 404)) return false;
      logger.warn('live read of a PersistentVolume failed; the item goes without it', { name, err: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
  };

  /**
   * The item for `key` from the caches now; undefined when its object is gone or not ours.
   * Items that may delete a disk get the PV's absence confirmed live.
   */
  async function buildItem(key: string, payload: DeletedClaim | undefined): Promise<ItemInput | undefined> {
    const parsed = parseItemKey(key);
    switch (parsed?.kind) {
      case 'PersistentVolumeClaim': {
        const pvc = claims.cache.get(parsed.name, parsed.namespace);
        if (!pvc || !isOurClaim(pvc, ownership)) return undefined;
        const item = buildClaimItem(pvc, view, ownership.driver);
        return claimReleasesDisk(pvc) ? withLivePvCheck(item, pvNameForClaim(pvc.metadata?.uid ?? ''), readPv) : item;
      }
      case 'PersistentVolumeClaimDeleted': {
        if (!payload) return undefined;
        return withLivePvCheck(buildClaimDeletedItem(payload, view), pvNameForClaim(payload.uid), readPv);
      }
      case 'PersistentVolume': {
        const pv = volumes.cache.get(parsed.name);
        return pv && isOurVolume(pv, ownership) ? buildVolumeItem(pv, view) : undefined;
      }
      case 'VolumeAttachment': {
        const va = attachments.cache.get(parsed.name);
        return va && isOurAttachment(va, ownership) ? buildAttachmentItem(va, view, ownership.driver) : undefined;
      }
      default:
        return undefined;
    }
  }

  const sendBatch = createBatchSender({
    config,
    clients,
    metrics,
    logger,
    secret,
    fetch: fetchFn,
    signal: shutdown.signal,
    buildItem,
  });

  async function runBatch(batch: Batch<DeletedClaim>): Promise<void> {
    const completions = await sendBatch(batch.keys, batch.payloads);
    queue.settle(batch, completions);
    schedulePump();
  }

  // --- lifecycle --------------------------------------------------------------------------
  const server = await startHealthServer({
    port: config.port,
    host: config.listenHost,
    ready,
    registry: metrics.registry,
  }).catch((err: unknown) => {
    secret.close();
    throw err;
  });
  const resyncTimer = setInterval(resync, config.resyncSeconds * 1000);
  for (const informer of informers) {
    informer.start().catch((err: unknown) => logger.error('informer failed to start', { resource: informer.resource, err }));
  }
  logger.info('forwarder started', {
    apiUrl: config.apiUrl,
    clusterId: config.clusterId,
    provisioner: config.provisioner,
    driver: config.driver,
    writeBack: config.writeBack,
    port: server.port,
  });

  let stopped: Promise<void> | undefined;
  async function stop(): Promise<void> {
    stopping = true;
    clearInterval(resyncTimer);
    clearTimeout(timer);
    await Promise.all(informers.map((informer) => informer.stop()));
    // Let requests in flight finish (their results are applied), but not forever.
    if (running.size > 0) {
      let waitTimer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (waitTimer = setTimeout(resolve, config.shutdownTimeoutMs)));
      await Promise.race([Promise.allSettled([...running]), waited]);
      clearTimeout(waitTimer);
    }
    shutdown.abort();
    secret.close();
    await server.close();
    logger.info('forwarder stopped', { queued: queue.size });
  }

  return {
    stop: () => (stopped ??= stop()),
    metrics,
    queue,
    port: server.port,
    ready,
    resync,
  };
}

/** Records the new fingerprint; true when it differs from the previous one. */
function remember(map: Map<string, string>, name: string, fingerprint: string | undefined): boolean {
  const previous = map.get(name);
  if (fingerprint === undefined) map.delete(name);
  else map.set(name, fingerprint);
  return previous !== fingerprint;
}
