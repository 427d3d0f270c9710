/**
 * The backend refusing every request, as decisions: which refusal an error is, what it tells the
 * people who look at a claim (an Event message that names the cause and the fix, the same on
 * every repeat so the Events aggregate), and — over a streak of nothing but refusals, on an
 * injected clock — when to say so on the objects held back and when to fail `/readyz`.
 *
 * The contract's 426 is not here: it is final, and refusal.ts says what the forwarder does.
 */
import type { CreateEventWrite, EventInvolvedObject, ItemInput } from '../contract/index.js';
import type { BackendRequestError } from './backend-client.js';

/**
 * `signature`: 401 (a secret the registration does not accept, or a body signed for another
 * cluster); `registration`: 403 (the cluster's registration is unusable); `unregistered`: 404;
 * `request`: any other 4xx; `failing`: 5xx; `unreachable`: no answer at all; `backend_unusable`:
 * a 2xx that is not the backend's answer to the request (not its JSON, or no result for an item
 * sent), or a 401/403/404 without the backend's error shape: a proxy's or firewall's page, or
 * VOLHOOK_API_URL naming another service.
 */
export type RefusalCause = 'signature' | 'registration' | 'unregistered' | 'request' | 'failing' | 'unreachable' | 'backend_unusable';

export interface BackendRefusal {
  cause: RefusalCause;
  /** The HTTP status; none when there was no answer. */
  status?: number;
  /** The backend's error code, when its answer had one. */
  code?: string;
}

/** The refusal a failed request is; undefined for the contract's 426. */
export function refusalOf(err: Pick<BackendRequestError, 'kind' | 'status' | 'code'>): BackendRefusal | undefined {
  if (err.kind === 'network' || err.kind === 'timeout') return { cause: 'unreachable' };
  if (err.kind === 'response') return { cause: 'backend_unusable', ...(err.status !== undefined && { status: err.status }) };
  if (err.kind !== 'http' || err.status === undefined) return undefined;
  const { status } = err;
  // The signature, registration and registry causes are the app's words; the same status
  // without its error shape is some other server's (API Gateway's 404 for a path it does not
  // route, a firewall's 403 page), which names a wrong URL or what stands in front, not the cluster.
  if ((status === 401 || status === 403 || status === 404) && err.code === undefined) return { cause: 'backend_unusable', status };
  const cause: RefusalCause | undefined =
    status === 401 ? 'signature' : status === 403 ? 'registration' : status === 404 ? 'unregistered' : status >= 500 ? 'failing' : status >= 400 ? 'request' : undefined;
  if (!cause) return undefined;
  return { cause, status, ...(err.code !== undefined && { code: err.code }) };
}

/** What the messages name: this cluster, and where its signing secret comes from. */
export interface RefusalContext {
  clusterId: string;
  apiUrl: string;
  /** VOLHOOK_SECRET_FILE, when the secret is read from a file (a mounted Secret). */
  secretFile?: string;
}

/**
 * The Event reason for a refusal: the backend said no, or no usable answer came (5xx, none at
 * all, or a 2xx that is not the backend's).
 */
export function refusalReason(refusal: BackendRefusal): 'BackendRefused' | 'BackendUnavailable' {
  return refusal.cause === 'failing' || refusal.cause === 'unreachable' || refusal.cause === 'backend_unusable' ? 'BackendUnavailable' : 'BackendRefused';
}

/**
 * The cause and the fix, in words for a tenant or an operator. No counts, times or request ids:
 * a repeat must read the same, so the Event's count grows instead of new Events piling up.
 */
export function refusalText(refusal: BackendRefusal, context: RefusalContext): string {
  const { clusterId } = context;
  const http = refusal.status === undefined ? '' : ` (HTTP ${refusal.status}${refusal.code ? ` ${refusal.code}` : ''})`;
  const secret = context.secretFile
    ? `the Secret mounted at ${context.secretFile} (the chart's secret.existingSecret, or the Secret named after its release)`
    : 'VOLHOOK_SECRET';
  const held = 'volhook holds this object back and retries';
  switch (refusal.cause) {
    case 'signature':
      // Not rotate-secret: it adds a secret, while the registration already holds the right one.
      return `the backend refuses this cluster's signature${http}: ${secret} does not hold a secret the registration of cluster "${clusterId}" accepts; put there the newest secret that \`npm run cluster -- show ${clusterId} --show-secrets\` prints. ${held}.`;
    case 'registration':
      return `the backend refuses cluster "${clusterId}"${http}: its registration is not usable; see \`npm run cluster -- show ${clusterId}\`. ${held}.`;
    case 'unregistered':
      return `the backend does not know cluster "${clusterId}"${http}: it is not registered (or VOLHOOK_API_URL ${context.apiUrl} is not the backend); register it with \`npm run cluster -- add ${clusterId}\`. ${held}.`;
    case 'request':
      return `the backend refuses this forwarder's requests${http}; see the forwarder's log for the backend's message. ${held}.`;
    case 'failing':
      return `the backend is failing${http}; see the backend's logs and alarms. ${held}.`;
    case 'unreachable':
      return `the backend at ${context.apiUrl} does not answer; check VOLHOOK_API_URL and the network between the cluster and the backend. ${held}.`;
    case 'backend_unusable':
      return `the answer from ${context.apiUrl}${http} is not the volhook backend's answer to the request (not its JSON or error, or no result for an item sent): a proxy's or firewall's page, or VOLHOOK_API_URL naming another service; check VOLHOOK_API_URL and what stands between the cluster and the backend. ${held}.`;
  }
}

/** Where a streak of refusals stands at a moment. */
export interface RefusalState {
  /** The last refusal of the streak, while there is one. */
  refusal?: BackendRefusal;
  /** The last refusal of the streak, once it is older than the event threshold. */
  surfaced?: BackendRefusal;
  /** The streak is older than the readiness threshold: `/readyz` fails. */
  notReady: boolean;
}

/**
 * A streak of requests all refused, since the first refusal after the last request served.
 * Pure but for the clock, injected; `refused` and `served` say when a transition happened, so
 * the shell logs it once.
 */
export class RefusalStreak {
  #since: number | undefined;
  #last: BackendRefusal | undefined;
  #surfaced = false;

  constructor(private readonly options: { eventAfterMs: number; readyAfterMs: number; now: () => number }) {}

  /** Records a refusal; true when it is the one that makes the streak surface. */
  refused(refusal: BackendRefusal): boolean {
    this.#since ??= this.options.now();
    this.#last = refusal;
    if (this.#surfaced || this.state().surfaced === undefined) return false;
    this.#surfaced = true;
    return true;
  }

  /** Records a request served; true when it ends a streak that had surfaced. */
  served(): boolean {
    const ended = this.#surfaced;
    this.#since = undefined;
    this.#last = undefined;
    this.#surfaced = false;
    return ended;
  }

  state(): RefusalState {
    if (this.#since === undefined || !this.#last) return { notReady: false };
    const age = this.options.now() - this.#since;
    return { refusal: this.#last, ...(age >= this.options.eventAfterMs && { surfaced: this.#last }), notReady: age >= this.options.readyAfterMs };
  }
}

/** The claims and VolumeAttachments a refused request carried: the objects their owners look at. */
export function heldBackObjects(items: readonly ItemInput[]): EventInvolvedObject[] {
  return items.flatMap((item): EventInvolvedObject[] => {
    if (item.kind === 'PersistentVolumeClaim') {
      const { name, namespace, uid } = item.pvc.metadata;
      return [{ kind: 'PersistentVolumeClaim', apiVersion: 'v1', name, namespace, uid }];
    }
    if (item.kind === 'VolumeAttachment') {
      const { name, uid } = item.volumeAttachment.metadata;
      return [{ kind: 'VolumeAttachment', apiVersion: 'storage.k8s.io/v1', name, uid }];
    }
    return [];
  });
}

/** The Warning Event on one object held back. */
export function refusalEvent(involvedObject: EventInvolvedObject, refusal: BackendRefusal, context: RefusalContext): CreateEventWrite {
  return { op: 'createEvent', involvedObject, type: 'Warning', reason: refusalReason(refusal), message: refusalText(refusal, context) };
}
