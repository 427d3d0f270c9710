/**
 * What the forwarder does when the backend refuses it, in one place:
 *
 * - the contract's 426 is final: nothing more is sent, `/readyz` fails naming the fix
 *   (refusal.ts), and the caller gives up sending and the Lease (`onContractRefused`);
 * - any other refusal (401/403/404, another 4xx, 5xx, no answer) may be fixed while the
 *   forwarder runs (a Secret corrected is re-read): it keeps retrying, and once nothing but
 *   refusals came back for `refusedEventMs` it puts a Warning Event on each claim and
 *   VolumeAttachment a refused request carried, sets `volhook_forwarder_backend_refused` and
 *   logs it once; after `refusedReadySeconds` `/readyz` fails too, so a rollout that brought a
 *   wrong secret stops there. The first request served ends all of it.
 */
import type { ContractRefusal, ItemInput } from '../contract/index.js';
import { applyWrites } from '../kube/apply-writes.js';
import type { KubeClients } from '../kube/clients.js';
import type { BackendRequestError } from './backend-client.js';
import { heldBackObjects, refusalEvent, refusalOf, RefusalStreak, refusalText, type RefusalContext } from './backend-refusals.js';
import type { ForwarderConfig } from './config.js';
import type { Logger } from './logger.js';
import type { ForwarderMetrics } from './metrics.js';
import { refusedReadiness } from './refusal.js';
import { startStartupCheck } from './startup-check.js';

export interface RefusalSurface {
  /** A request the backend refused (or did not answer), with the items it carried. */
  refused(err: BackendRequestError, items: readonly ItemInput[]): Promise<void>;
  /** A request the backend served. */
  served(): void;
  /**
   * This replica stopped sending (the Lease lost): what it knew of the backend ends with it, so
   * a standby is not held unready by a streak only a leader could end.
   */
  standingBy(): void;
  /** The backend's 426: it does not serve this forwarder's contract. */
  contractRefused(refusal: ContractRefusal): void;
  contractRefusal(): ContractRefusal | undefined;
  /** Why `/readyz` fails on the backend's account; undefined while it does not. */
  notReady(): string | undefined;
  /** Stops asking the backend (the startup check). */
  close(): void;
}

export interface RefusalSurfaceDeps {
  config: Pick<ForwarderConfig, 'clusterId' | 'apiUrl' | 'secretFile' | 'refusedEventMs' | 'refusedReadySeconds' | 'backoffInitialMs'>;
  clients: KubeClients;
  metrics: ForwarderMetrics;
  logger: Logger;
  /** Stop sending and give up the Lease: called once, on the 426. */
  onContractRefused(): void;
  /** Asks the backend whether it accepts this forwarder (startup-check.ts); not ready until it does. */
  check?(): Promise<'accepted' | 'unknown'>;
  now?: () => number;
}

export function createRefusalSurface(deps: RefusalSurfaceDeps): RefusalSurface {
  const { config, metrics, logger } = deps;
  const context: RefusalContext = { clusterId: config.clusterId, apiUrl: config.apiUrl, ...(config.secretFile !== undefined && { secretFile: config.secretFile }) };
  const streak = new RefusalStreak({ eventAfterMs: config.refusedEventMs, readyAfterMs: config.refusedReadySeconds * 1000, now: deps.now ?? Date.now });
  let contract: { refusal: ContractRefusal; reason: string } | undefined;
  const describe = (err: BackendRequestError): string => {
    const refusal = refusalOf(err);
    return refusal ? refusalText(refusal, context) : err.message;
  };
  const startup =
    deps.check &&
    startStartupCheck({
      check: deps.check,
      describe,
      onContractRefused: (err) => err.refusal && surface.contractRefused(err.refusal),
      logger,
      backoff: { initialMs: config.backoffInitialMs, maxMs: 30_000 },
    });

  const surface: RefusalSurface = {
    async refused(err, items) {
      const refusal = refusalOf(err);
      if (!refusal) return;
      const first = streak.refused(refusal);
      const surfaced = streak.state().surfaced;
      if (!surfaced) return;
      const message = refusalText(surfaced, context);
      metrics.backendRefused.reset();
      metrics.backendRefused.set({ cause: surfaced.cause }, 1);
      if (first) {
        logger.error('the backend refuses every request; Warning Events on the claims and VolumeAttachments held back', {
          cause: surfaced.cause,
          status: surfaced.status,
          code: surfaced.code,
          detail: message,
          readyzFailsAfterSeconds: config.refusedReadySeconds,
        });
      }
      // Best effort: the Events say it where tenants look; a failure here changes nothing else.
      const events = heldBackObjects(items).map((object) => refusalEvent(object, surfaced, context));
      await Promise.all(events.map((event) => applyWrites(deps.clients, [event]).catch(() => undefined)));
    },
    served() {
      if (!streak.served()) return;
      metrics.backendRefused.reset();
      logger.info('the backend serves this forwarder again', {});
    },
    standingBy() {
      streak.served();
      metrics.backendRefused.reset();
    },
    contractRefused(refusal) {
      if (contract) return;
      const { offered, served, upgrade, backendVersion, forwarderVersion } = refusal.contract;
      const reason = refusedReadiness(refusal.contract);
      contract = { refusal, reason };
      deps.onContractRefused();
      metrics.contractRefused.set({ offered: String(offered), served: served.join(','), upgrade }, 1);
      logger.error('backend refuses the contract this forwarder speaks; nothing more is sent', { offered, served, upgrade, backendVersion, forwarderVersion, detail: reason });
    },
    contractRefusal: () => contract?.refusal,
    notReady() {
      if (contract) return contract.reason;
      const gate = startup?.notReady();
      if (gate) return gate;
      const state = streak.state();
      if (!state.notReady || !state.refusal) return undefined;
      return `not ready: every request to the backend was refused for ${config.refusedReadySeconds}s or more; ${refusalText(state.refusal, context)}`;
    },
    close: () => startup?.stop(),
  };
  return surface;
}
