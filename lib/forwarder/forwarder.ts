/**
 * The in-cluster forwarder, put together: informers for the table of watched resources
 * (watches.ts) turn events that are news (changes.ts) into keys in the work queue (queue.ts);
 * the pump (pump.ts) hands due batches to the sender (sender.ts), which builds each item from
 * the caches (item-source.ts), posts them signed, and applies the writes of the results.
 * The informers live in watching.ts, what a refusal by the backend does in refusal-surface.ts;
 * this file holds the lifecycle — start, resync, stop — leadership and health.
 *
 * With leader election (two replicas), every replica runs its informers and queue; only the
 * holder of the Lease (leader-election.ts) pumps batches to the backend. A standby's caches
 * and queue stay current, so on taking over it sends at once, without a relist. On stop the
 * leader sends nothing more, lets requests in flight finish (bounded), then releases the Lease.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ItemKeys, type ContractRefusal, type ForwarderVersions } from '../contract/index.js';
import type { Ownership } from './filter.js';
import { FORWARDER_VERSIONS, postCheck, RequestCodings, ServedFeatures, type FetchLike } from './backend-client.js';
import { backendUrls, leaseTiming, parseConfig, type ForwarderConfig, type ForwarderConfigInput } from './config.js';
import { BackendChoice, startFailback } from './failover.js';
import { itemSource, liveClassRead, livePvRead, reportOfCaches } from './item-source.js';
import type { DeletedClaim } from './items.js';
import { httpFetch } from './http-fetch.js';
import { startLeaderElection, type LeaderElector, type LeaseApi } from './leader-election.js';
import { accessFromKubeConfig, type KubeAccess, type KubeConfigLike } from './kube/access.js';
import { restClients, restLeaseApi } from './kube/clients.js';
import { kubeRest } from './kube/rest.js';
import { createJsonLogger, type Logger } from './logger.js';
import { createMetrics, type ForwarderMetrics } from './metrics.js';
import { createPump } from './pump.js';
import { DEFAULT_BACKOFF, WorkQueue } from './queue.js';
import { createRefusalSurface } from './refusal-surface.js';
import { ReportTracker } from './report.js';
import { openSecret, signingSecretMetric } from './secret.js';
import { secretFingerprint } from '../contract/signing.js';
import { SIGNING_SECRET_HEADER } from './server.js';
import { createBatchSender } from './sender.js';
import { startHealthServer, type Readiness } from './server.js';
import { openTls } from './tls.js';
import type { Offer } from './watches.js';
import { createWatching } from './watching.js';

export type ForwarderDeps = ForwarderDepsBase &
  (
    | {
        /** Where the API server is and how to authenticate (kube/access.ts: in the cluster, a URL). */
        kubeAccess: KubeAccess;
        kubeConfig?: never;
      }
    | {
        /** A client-node KubeConfig (tests, the local stack): its server, TLS and credentials. */
        kubeConfig: KubeConfigLike;
        kubeAccess?: never;
      }
  );

interface ForwarderDepsBase {
  /** Defaults to `httpFetch` (node:http; see http-fetch.ts for why not the global fetch). */
  fetch?: FetchLike;
  logger?: Logger;
  /** The Lease calls (leader election); defaults to kube/clients.ts's over the API server. */
  leaseApi?: LeaseApi;
  /**
   * Test-only: what the requests say of this forwarder, instead of this build's version and
   * contract (a contract no backend serves, to see the refusal).
   */
  claimedVersions?: ForwarderVersions;
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
  /** What `/readyz` says: synced, the backend serves this forwarder's contract, and has not refused every request for `refusedReadySeconds`. */
  readiness(): Readiness;
  /** The backend's refusal of this forwarder's contract, once it has refused it. */
  contractRefusal(): ContractRefusal | undefined;
  /** This replica sends: it holds the Lease, or runs without leader election. */
  leading(): boolean;
  /** Its holderIdentity with leader election. */
  identity?: string;
  /**
   * Re-offers every object of ours that is not settled, and the volume report. Also runs every
   * `resyncSeconds`, offering the report only when it changed or the backend needs it by the
   * next (ReportTracker `due`).
   */
  resync(): void;
}

export async function startForwarder(input: ForwarderConfigInput, deps: ForwarderDeps): Promise<Forwarder> {
  const config: ForwarderConfig = parseConfig(input);
  const logger = deps.logger ?? createJsonLogger({ level: config.logLevel });
  const tls = await openTls(config, { pollMs: config.secretPollMs, logger });
  const fetchFn: FetchLike = deps.fetch ?? httpFetch({ tls: tls.current });
  const ownership: Ownership = { provisioner: config.provisioner, driver: config.driver, canary: config.canary };
  // client-node is not loaded: its import alone costs 25–33 MiB resident (kube/access.ts).
  const rest = kubeRest(deps.kubeAccess ?? accessFromKubeConfig(deps.kubeConfig));
  const clients = restClients(rest);
  // Told of every secret signed with; the metric takes over once it exists.
  let onSecret: (secret: string) => void = () => {};
  const secret = await openSecret({ file: config.secretFile, value: config.secret, pollMs: config.secretPollMs, logger, onChange: (s) => onSecret(s) });

  const queue = new WorkQueue<DeletedClaim>({
    batchSize: config.batchSize,
    maxInFlight: config.concurrency,
    backoff: { ...DEFAULT_BACKOFF, initialMs: config.backoffInitialMs, maxMs: config.backoffMaxMs },
    cadence: { gridMs: config.cadenceMs, busyKeys: config.cadenceBusyKeys },
  });
  const metrics = createMetrics({ queueDepth: () => queue.size });
  onSecret = signingSecretMetric(metrics.signingSecret);
  onSecret(secret.current());
  /** Aborted when this replica stops sending (stop, or the Lease lost): requests in flight end. */
  let term = new AbortController();
  let stopping = false;
  let elector: LeaderElector | undefined;
  const versions = deps.claimedVersions ?? FORWARDER_VERSIONS;
  const backends = new BackendChoice(backendUrls(config));
  const inUse = (url: string): void => {
    for (const each of backends.urls) metrics.backendInUse.set({ url: each }, each === url ? 1 : 0);
  };
  inUse(backends.active());
  // Whether bodies go gzip'd, per backend: learnt from each one's answers, its check's first
  // (body-encoding.ts); a standby may be of another version than the primary.
  const codingsByUrl = new Map<string, RequestCodings>();
  const codingsAt = (apiUrl: string): RequestCodings => {
    let codings = codingsByUrl.get(apiUrl);
    if (!codings) codingsByUrl.set(apiUrl, (codings = new RequestCodings()));
    return codings;
  };
  // What each backend serves beyond the contract, from its check's answer (lib/contract/check.ts).
  const featuresByUrl = new Map<string, ServedFeatures>();
  const featuresAt = (apiUrl: string): ServedFeatures => {
    let features = featuresByUrl.get(apiUrl);
    if (!features) featuresByUrl.set(apiUrl, (features = new ServedFeatures()));
    return features;
  };
  const checkAt = (apiUrl: string) =>
    postCheck({ apiUrl, clusterId: config.clusterId, secret: secret.current, fetch: fetchFn, timeoutMs: config.requestTimeoutMs, versions, provisioner: config.provisioner, codings: codingsAt(apiUrl), features: featuresAt(apiUrl) });
  const leading = (): boolean => elector === undefined || elector.isLeader();

  function offer({ key, payload }: Offer): void {
    if (stopping) return;
    queue.add(key, payload);
    pump.schedule();
  }
  const watching = createWatching({ rest, config, ownership, metrics, logger, offer, onSynced: () => offer({ key: ItemKeys.report() }) });
  const { ctx, ready } = watching;
  // Asked for (a test, a new leader): the report too. On the timer: the report when due.
  const resync = (report: 'always' | 'when due' = 'always'): void => {
    if (!ready() || stopping) return;
    const offerReport = report === 'always' || reports.due(() => reportOfCaches(ctx.caches, ownership), Date.now(), config.resyncSeconds * 1000);
    watching.resync((key) => queue.has(key), offerReport);
  };

  /**
   * On the contract's 426 no retry can help, nor a restart: the forwarder stops sending (its
   * queue keeps every key) and gives up the Lease, for a replica the backend serves; `/readyz`
   * fails — so a rolling update that brought it stops there — and liveness stays ok.
   */
  const refusals = createRefusalSurface({
    config,
    clients,
    metrics,
    logger,
    onContractRefused() {
      pump.stop();
      if (elector) void elector.stop();
    },
    check: () => checkAt(backends.active()),
  });

  function readiness(): Readiness {
    const refused = refusals.notReady();
    if (refused) return { ready: false, reason: refused };
    return ready() ? { ready: true } : { ready: false, reason: 'informers not synced' };
  }

  // --- the queue → the backend ----------------------------------------------------------
  // Parts measured by what they compress to while the backend takes gzip'd bodies (body-encoding.ts).
  const reports = new ReportTracker({ sizing: () => (codingsAt(backends.active()).gzip ? 'gzip' : 'json') });
  const sendBatch = createBatchSender({
    config,
    clients,
    metrics,
    logger,
    secret,
    fetch: fetchFn,
    versions,
    codings: codingsAt,
    refusals,
    backends,
    onSwitch: inUse,
    get signal() {
      return term.signal;
    },
    buildItem: itemSource({ ctx, ownership, readPv: livePvRead(clients, logger), readClass: liveClassRead(clients, logger), reports, serves: (feature) => featuresAt(backends.active()).has(feature), logger }),
  });
  const pump = createPump({
    queue,
    async send(batch) {
      const completions = await sendBatch(batch.keys, batch.payloads);
      const reported = completions.get(ItemKeys.report());
      if (reported) reports.answered(reported.type === 'done', reported.type === 'done' ? reported.reportWithinSeconds : undefined);
      return completions;
    },
    ready: () => ready() && leading() && !refusals.contractRefusal(),
    logger,
  });

  // --- lifecycle and health ---------------------------------------------------------------
  const server = await startHealthServer({ port: config.port, host: config.listenHost, readiness, registry: metrics.registry, headers: () => ({ [SIGNING_SECRET_HEADER]: secretFingerprint(secret.current()) }) }).catch((err: unknown) => {
    secret.close();
    tls.close();
    throw err;
  });
  const resyncTimer = setInterval(() => resync('when due'), config.resyncSeconds * 1000);
  const stopFailback = config.standbyApiUrls.length > 0 ? startFailback({ choice: backends, check: checkAt, intervalMs: config.failbackSeconds * 1000, logger, onSwitch: inUse }) : () => undefined;
  watching.start();
  if (config.leaderElect) {
    elector = startLeaderElection({
      api: deps.leaseApi ?? restLeaseApi(rest),
      namespace: config.leaseNamespace ?? '',
      name: config.leaseName,
      identity: config.leaderIdentity ?? `${hostname()}_${randomUUID()}`,
      ...leaseTiming(config),
      logger,
      onStartedLeading() {
        metrics.leader.set(1);
        term = new AbortController();
        // The queue holds every key offered while standing by; resync adds what is unsettled.
        resync('always');
        pump.schedule();
      },
      onStoppedLeading() {
        metrics.leader.set(0);
        term.abort();
        refusals.standingBy();
      },
    });
  } else {
    metrics.leader.set(1);
  }
  metrics.buildInfo.set({ version: versions.forwarderVersion, contract: String(versions.contract) }, 1);
  logger.info('forwarder started', {
    version: versions.forwarderVersion,
    contract: versions.contract,
    apiUrl: config.apiUrl,
    ...(config.standbyApiUrls.length > 0 && { standbyApiUrls: config.standbyApiUrls }),
    clusterId: config.clusterId,
    provisioner: config.provisioner,
    driver: config.driver,
    ...(config.canary && { canary: true }),
    port: server.port,
    ...(config.caFile || config.clientCertFile ? { caFile: config.caFile, clientCertFile: config.clientCertFile } : {}),
  });

  async function stop(): Promise<void> {
    stopping = true;
    clearInterval(resyncTimer);
    stopFailback();
    pump.stop();
    await watching.stop();
    // Let requests in flight finish (their results are applied), but not forever.
    await pump.drain(config.shutdownTimeoutMs);
    term.abort();
    // ReleaseOnCancel, once nothing guarded by the Lease is still running.
    await elector?.stop();
    secret.close();
    tls.close();
    refusals.close();
    await server.close();
    logger.info('forwarder stopped', { queued: queue.size });
  }

  let stopped: Promise<void> | undefined;
  return {
    stop: () => (stopped ??= stop()),
    metrics,
    queue,
    port: server.port,
    ready,
    readiness,
    contractRefusal: () => refusals.contractRefusal(),
    leading: () => !stopping && leading(),
    ...(elector ? { identity: elector.identity } : {}),
    resync: () => resync('always'),
  };
}
