/**
 * The watched objects: one informer per row of the table (watches.ts), the context the rows
 * share, and resync. Events that are news (changes.ts) become offers of keys; what is done with
 * them (the queue, the pump) is the caller's.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { ItemKeys } from '../contract/index.js';
import type { Ownership } from './filter.js';
import { ChangeFilter, type EventType } from './changes.js';
import type { ForwarderConfig } from './config.js';
import { Dependents } from './dependents.js';
import { watchResource, type WatchedResource } from './informers.js';
import type { KubeRest } from './kube/rest.js';
import type { Logger } from './logger.js';
import type { ForwarderMetrics } from './metrics.js';
import { TRANSFORMS } from './transforms.js';
import { RESOURCES, WATCHES, type Offer, type Resource, type Watch, type WatchContext, type WatchedObjects } from './watches.js';

type Informers = { [R in Resource]: WatchedResource<WatchedObjects[R]> };

export interface Watching {
  ctx: WatchContext;
  /** Every cache has synced. */
  ready(): boolean;
  /** Offers every object of ours that is not settled and not queued, and the volume report when `report` says so. */
  resync(queued: (key: string) => boolean, report: boolean): void;
  start(): void;
  stop(): Promise<void>;
}

export interface WatchingDeps {
  rest: KubeRest;
  config: Pick<ForwarderConfig, 'informerRestartMs'>;
  ownership: Ownership;
  metrics: ForwarderMetrics;
  logger: Logger;
  offer(offer: Offer): void;
  /** Every cache has synced (once; again after a restart's relist). */
  onSynced(): void;
}

export function createWatching(deps: WatchingDeps): Watching {
  const { ownership, metrics, logger } = deps;
  // Their events come only once they are started: by then `ctx` exists.
  const informers = Object.fromEntries(RESOURCES.map((resource) => [resource, inform(resource)])) as Informers;
  const all = Object.values(informers) as WatchedResource<KubernetesObject>[];
  const ready = (): boolean => all.every((informer) => informer.synced);
  const ctx: WatchContext = {
    ownership,
    caches: Object.fromEntries(RESOURCES.map((resource) => [resource, informers[resource].cache])) as WatchContext['caches'],
    dependents: new Dependents({
      claims: () => informers.persistentvolumeclaims.cache.list(),
      attachments: () => informers.volumeattachments.cache.list(),
    }),
    ready,
  };

  /** Per `whileAbsent` text, the resources not served now: it is said when the first goes. */
  const absent = new Map<string, Set<string>>();
  function served(resource: Resource, whileAbsent: string, now: boolean): void {
    const resources = absent.get(whileAbsent) ?? new Set<string>();
    const before = resources.size;
    if (now) resources.delete(resource);
    else resources.add(resource);
    absent.set(whileAbsent, resources);
    if (!now && before === 0) logger.info(whileAbsent, { resource, notServed: true });
    if (now) logger.info('resource served now; watching it', { resource });
  }

  /** The informer of one row: every event tracked, those that are news offered. */
  function inform<R extends Resource>(resource: R): WatchedResource<WatchedObjects[R]> {
    const watch = WATCHES[resource] as Watch<WatchedObjects[R]>;
    const changes = new ChangeFilter<WatchedObjects[R]>((object) => watch.news(object, ownership));
    const on = (type: EventType) => (object: WatchedObjects[R]) => {
      watch.track?.(type, object, ctx);
      if (!changes.isNews(type, object)) {
        metrics.updatesIgnored.inc({ resource });
        return;
      }
      for (const offered of watch.keys(type, object, ctx)) deps.offer(offered);
    };
    return watchResource<WatchedObjects[R]>({
      rest: deps.rest,
      resource,
      path: watch.path,
      optional: watch.optional !== undefined,
      ...(watch.optional && { onServed: (now: boolean) => served(resource, watch.optional!.whileAbsent, now) }),
      transform: TRANSFORMS[resource] as (object: WatchedObjects[R]) => WatchedObjects[R],
      restartDelayMs: deps.config.informerRestartMs,
      logger,
      onRestart: () => metrics.informerRestarts.inc({ resource }),
      onSynced: () => {
        if (!ready()) return;
        ctx.dependents.refreshZones(informers.nodes.cache.list());
        logger.info('all caches synced; forwarding');
        deps.onSynced();
      },
      handlers: { add: on('add'), update: on('update'), delete: on('delete') },
    });
  }

  function resync(queued: (key: string) => boolean, report: boolean): void {
    // The audit's view of the cluster: a digest, or the whole report when it changed.
    if (report) deps.offer({ key: ItemKeys.report() });
    for (const resource of RESOURCES) {
      const watch = WATCHES[resource] as Watch<KubernetesObject>;
      if (!watch.resync) continue;
      for (const object of informers[resource].cache.list()) {
        // A key still queued is not lost: its own answer said when to look again (a claim
        // waiting out EC2's 6-hour wait between modifications must not be sent every resync).
        for (const offered of watch.resync(object, ctx)) if (!queued(offered.key)) deps.offer(offered);
      }
    }
  }

  return {
    ctx,
    ready,
    resync,
    start() {
      for (const informer of all) {
        informer.start().catch((err: unknown) => logger.error('informer failed to start', { resource: informer.resource, err }));
      }
    },
    stop: async () => void (await Promise.all(all.map((informer) => informer.stop()))),
  };
}
