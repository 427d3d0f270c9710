/**
 * The leader election loop over one Lease, as client-go's `LeaderElector.Run` with a
 * LeaseLock and `ReleaseOnCancel: true` (decisions in lease.ts):
 *
 * - acquire: try every retryPeriod, jittered by up to 1.2 × retryPeriod, until a try wins;
 * - renew: try at once, then every retryPeriod; a renewal that has not succeeded within
 *   renewDeadline loses the lease (stop leading). client-go's components then exit; the
 *   forwarder goes back to acquiring instead, its caches still warm;
 * - stop: the loop ends and, if we hold the lease, it is released (empty holder, 1 s), so a
 *   standby takes over at its next try rather than a lease duration later.
 *
 * `create` of the Lease happens once per cluster (the first candidate to find none); every
 * other write is a PUT of the Lease last read, with its resourceVersion (409 on a race).
 */
import type { V1Lease } from '@kubernetes/client-node';
import { isApiError } from '../kube/errors.js';
import { accessFromKubeConfig, type KubeConfigLike } from './kube/access.js';
import { restLeaseApi, type LeaseApi } from './kube/clients.js';
import { kubeRest } from './kube/rest.js';
import { decide, isLeader, isLeaseValid, jittered, observe, recordOf, released, renewed, specOf, wrote, type LeaderRecord, type LeaseTiming, type Observation } from './lease.js';
import type { Logger } from './logger.js';
import { pause } from './pause.js';

export type { LeaseApi } from './kube/clients.js';

/** The Lease calls over the API server a KubeConfig names. */
export function leaseApi(kubeConfig: KubeConfigLike): LeaseApi {
  return restLeaseApi(kubeRest(accessFromKubeConfig(kubeConfig)));
}

export interface LeaderElectorOptions extends LeaseTiming {
  api: LeaseApi;
  namespace: string;
  name: string;
  /** This candidate's holderIdentity: unique per process (hostname + random, as the control plane's). */
  identity: string;
  logger: Logger;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  /** A holder other than the last one seen (including the first seen); '' when released. */
  onNewLeader?(identity: string): void;
  /** Injected in tests. */
  now?: () => number;
  random?: () => number;
}

export interface LeaderElector {
  readonly identity: string;
  /** We hold the lease (the last record seen or written names us, and we are leading). */
  isLeader(): boolean;
  /** The holder last seen ('' when none). */
  leader(): string;
  /** Ends the loop; releases the lease if we hold it. */
  stop(): Promise<void>;
}

export function startLeaderElection(options: LeaderElectorOptions): LeaderElector {
  const { api, namespace, name, identity, logger } = options;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const leaseDurationSeconds = Math.floor(options.leaseDurationMs / 1000);
  const where = `${namespace}/${name}`;

  let observation: Observation | undefined;
  /** The Lease last read or written: the next PUT carries its resourceVersion. */
  let lease: V1Lease | undefined;
  let leading = false;
  let stopped = false;
  let reported: string | undefined;
  /** Aborted by stop(): ends the wait between tries at once. */
  const stopping = new AbortController();

  const sleep = (ms: number) => pause(ms, stopping.signal);

  async function write(record: LeaderRecord): Promise<void> {
    if (!lease) throw new Error('lease not initialized, call get or create first');
    lease = await api.replaceNamespacedLease({ name, namespace, body: { ...lease, spec: specOf(record) } });
    observation = wrote(record, now());
  }

  /** One tryAcquireOrRenew: true when we hold the lease after it. */
  async function tryAcquireOrRenew(): Promise<boolean> {
    const at = now();
    // 1. The leader's fast path: renew on the Lease last written, no read.
    if (isLeader(observation, identity) && observation && isLeaseValid(observation, at) && lease) {
      try {
        await write(renewed(observation.record, identity, leaseDurationSeconds, at));
        return true;
      } catch (err) {
        logger.warn('failed to renew the lease optimistically; reading it', { lease: where, err: describe(err) });
      }
    }
    // 2. Read it, or create it.
    try {
      lease = await api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!isApiError(err, 404)) {
        logger.warn('cannot read the lease', { lease: where, err: describe(err) });
        return false;
      }
      const decision = decide({ observation: undefined, exists: false, identity, leaseDurationSeconds, now: at });
      if (decision.action !== 'create') return false;
      try {
        lease = await api.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec: specOf(decision.record) } });
        observation = wrote(decision.record, now());
        return true;
      } catch (createErr) {
        logger.warn('cannot create the lease', { lease: where, err: describe(createErr) });
        return false;
      }
    }
    // 3. Who holds it, seen on our own clock; 4. take it over or renew it, unless another holds it.
    observation = observe(observation, recordOf(lease.spec), at);
    const decision = decide({ observation, exists: true, identity, leaseDurationSeconds, now: at });
    if (decision.action === 'wait') return false;
    try {
      await write(decision.record);
      return true;
    } catch (err) {
      // 409: another candidate wrote first; it is read again at the next try.
      logger[isApiError(err, 409) ? 'debug' : 'warn']('failed to update the lease', { lease: where, err: describe(err) });
      return false;
    }
  }

  function reportTransition(): void {
    const holder = observation?.record.holderIdentity ?? '';
    if (holder === reported) return;
    reported = holder;
    logger.info('new leader observed', { lease: where, leader: holder || '(none)', self: holder === identity });
    options.onNewLeader?.(holder);
  }

  /** A try bounded by `ms`: a request that hangs past the renew deadline is a failed try. */
  async function tryWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      return await Promise.race([tryAcquireOrRenew(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function acquire(): Promise<boolean> {
    logger.info('attempting to acquire the leader lease', { lease: where, identity });
    while (!stopped) {
      const won = await tryWithin(options.renewDeadlineMs);
      reportTransition();
      if (won && !stopped) return true;
      await sleep(jittered(options.retryPeriodMs, random()));
    }
    return false;
  }

  /** Renews until a renewal misses its deadline (false) or we are stopped (true). */
  async function renew(): Promise<boolean> {
    while (!stopped) {
      const deadline = now() + options.renewDeadlineMs;
      let renewedOk = false;
      while (!stopped) {
        renewedOk = await tryWithin(Math.max(1, deadline - now()));
        if (renewedOk || now() >= deadline) break;
        await sleep(Math.min(options.retryPeriodMs, Math.max(0, deadline - now())));
      }
      reportTransition();
      if (stopped) return true;
      if (!renewedOk) return false;
      await sleep(options.retryPeriodMs);
    }
    return true;
  }

  const loop = (async () => {
    while (!stopped) {
      if (!(await acquire())) break;
      leading = true;
      logger.info('became leader', { lease: where, identity });
      options.onStartedLeading();
      const kept = await renew();
      if (!kept) {
        leading = false;
        logger.warn('leader lease lost: renewal missed its deadline; standing by', { lease: where, identity });
        options.onStoppedLeading();
      }
    }
  })().catch((err: unknown) => logger.error('leader election loop failed', { lease: where, err: describe(err) }));

  return {
    identity,
    isLeader: () => leading && isLeader(observation, identity),
    leader: () => observation?.record.holderIdentity ?? '',
    async stop() {
      if (stopped) return loop;
      stopped = true;
      stopping.abort();
      await loop;
      const wasLeading = leading;
      leading = false;
      // ReleaseOnCancel: only a lease we hold, on the Lease we last wrote (its resourceVersion).
      if (observation && isLeader(observation, identity)) {
        try {
          await write(released(observation.record, now()));
          logger.info('released the leader lease', { lease: where, identity });
        } catch (err) {
          logger.warn('failed to release the leader lease; it expires on its own', { lease: where, err: describe(err) });
        }
      }
      if (wasLeading) options.onStoppedLeading();
    },
  };
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
