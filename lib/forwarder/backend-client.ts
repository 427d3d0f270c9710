/** Posting a batch to `POST /v1/clusters/{clusterId}/reconcile`, signed. */
import * as z from 'zod/mini';
import {
  ACCEPT_ENCODING_HEADER,
  acceptsGzip,
  checkUrl,
  encodeRequestBody,
  CheckResponseSchema,
  CONTRACT_REFUSAL_STATUS,
  CONTRACT_VERSIONS,
  ContractRefusalSchema,
  ErrorResponseSchema,
  NO_ROUTE_CODE,
  ReconcileResponseSchema,
  sign,
  VOLHOOK_VERSION,
  type BackendFeature,
  type ContractRefusal,
  type ForwarderVersions,
  type Result,
} from '../contract/index.js';

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface BackendClientOptions {
  apiUrl: string;
  clusterId: string;
  /** The current signing secret (it may rotate between calls). */
  secret: () => string;
  fetch: FetchLike;
  timeoutMs: number;
  /** Aborts every request (shutdown). */
  signal?: AbortSignal;
  /** What the request says of this forwarder, signed; default this build's (tests claim others). */
  versions?: ForwarderVersions;
  /** Whether the backend takes gzip'd bodies, learnt from its answers; none: bodies go as they are. */
  codings?: RequestCodings;
  /** The provisioner name this forwarder serves: its check asks the backend whether the registration names the same. */
  provisioner?: string;
  /** What the backend serves beyond the contract, learnt from its check answer. */
  features?: ServedFeatures;
}

/**
 * What a backend said it serves beyond the contract (lib/contract/check.ts `BackendFeatures`),
 * as its last check answer named it: nothing until one does, and nothing from a backend without
 * the check or whose answer names none.
 */
export class ServedFeatures {
  #served: ReadonlySet<string> = new Set();

  has(feature: BackendFeature): boolean {
    return this.#served.has(feature);
  }

  learn(serves: readonly string[] | undefined): void {
    this.#served = new Set(serves ?? []);
  }
}

/** How long a backend's 415 to a gzip'd body stops the forwarder compressing, whatever its answers say. */
export const GZIP_REFUSED_HOLD_MS = 60 * 60 * 1000;

/**
 * Whether the backend takes gzip'd request bodies: what its last answer's `Accept-Encoding`
 * said (lib/contract/body-encoding.ts). A backend of contract 1 (0.1.0) never says so, nor one
 * built before gzip'd bodies; so nothing is gzip'd until an answer says it, and nothing more once
 * one of the backend's does not (a backend rolled back). A 415 to a gzip'd body — a gateway in front of the
 * function that did not pass it intact (lib/app/lambda-body.ts) — stops it for
 * {@link GZIP_REFUSED_HOLD_MS}, though the function's answers still say gzip.
 */
export class RequestCodings {
  #advertised = false;
  #refusedUntil = -Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  get gzip(): boolean {
    return this.#advertised && this.now() >= this.#refusedUntil;
  }

  /**
   * An answer without the header un-learns it, unless it is a 5xx or a 429: those may be a
   * gateway's or a proxy's own (throttled, timed out) and say nothing of the backend behind.
   */
  learn(response: Response): void {
    if (acceptsGzip(response.headers.get(ACCEPT_ENCODING_HEADER))) this.#advertised = true;
    else if (response.status < 500 && response.status !== 429) this.#advertised = false;
  }

  /** A gzip'd body was refused with 415. */
  refused(): void {
    this.#refusedUntil = this.now() + GZIP_REFUSED_HOLD_MS;
  }
}

/** What this build's forwarder says of itself: its version and the contract it speaks. */
export const FORWARDER_VERSIONS: ForwarderVersions = { contract: CONTRACT_VERSIONS.current, forwarderVersion: VOLHOOK_VERSION };

/**
 * No usable answer for the batch. `status` is the HTTP status when there was one; `kind`
 * says why: the network, the timeout, an HTTP error, a 2xx body that is not a response, or
 * `contract`: the backend does not serve this forwarder's contract (`refusal` says what it
 * serves and what to upgrade).
 */
export class BackendRequestError extends Error {
  override readonly name = 'BackendRequestError';
  constructor(
    readonly kind: 'network' | 'timeout' | 'http' | 'response' | 'contract',
    message: string,
    readonly status?: number,
    readonly refusal?: ContractRefusal,
    /** The backend's error code (`bad_signature`, `unknown_cluster`…) when its answer had one. */
    readonly code?: string,
  ) {
    super(message);
  }
}

export function reconcileUrl(apiUrl: string, clusterId: string): string {
  return `${apiUrl.replace(/\/+$/, '')}/v1/clusters/${encodeURIComponent(clusterId)}/reconcile`;
}

/**
 * The request body. The cluster id is in it, and so signed: the backend refuses a body whose
 * cluster is not the one in the path.
 */
export function reconcileBody(clusterId: string, items: readonly unknown[]): string {
  return JSON.stringify({ clusterId, items });
}

/** Posts `items` and returns the results, or throws `BackendRequestError`. */
export async function postReconcile(options: BackendClientOptions, items: readonly unknown[]): Promise<{ status: number; results: Result[] }> {
  const { response, text } = await postSigned(options, reconcileUrl(options.apiUrl, options.clusterId), reconcileBody(options.clusterId, items));
  const parsed = ReconcileResponseSchema.safeParse(safeJson(text));
  if (!parsed.success) {
    throw new BackendRequestError('response', `malformed response: ${z.prettifyError(parsed.error).slice(0, 300)}`, response.status);
  }
  return { status: response.status, results: parsed.data.results };
}

/**
 * Asks the backend whether it accepts this forwarder, doing nothing (lib/contract/check.ts):
 * `accepted`, or `unknown` from a backend that has no such route (it cannot say); throws
 * `BackendRequestError` for a refusal, as a reconcile request would get it.
 */
export async function postCheck(options: BackendClientOptions): Promise<'accepted' | 'unknown'> {
  let answer: { response: Response; text: string };
  try {
    answer = await postSigned(options, checkUrl(options.apiUrl, options.clusterId), JSON.stringify({ clusterId: options.clusterId, ...(options.provisioner !== undefined && { provisioner: options.provisioner }) }));
  } catch (err) {
    if (err instanceof BackendRequestError && isNoRoute(err)) {
      options.features?.learn(undefined);
      return 'unknown';
    }
    throw err;
  }
  const parsed = CheckResponseSchema.safeParse(safeJson(answer.text));
  if (!parsed.success) throw new BackendRequestError('response', `malformed check answer: ${z.prettifyError(parsed.error).slice(0, 300)}`, answer.response.status);
  options.features?.learn(parsed.data.serves);
  return 'accepted';
}

/**
 * A 404 that says the route does not exist: the app's own `not_found`, or a 404 without the
 * app's error shape — API Gateway's `{"message":"Not Found"}` for a path its template does not
 * route (0.1.0's routes only reconcile and healthz), or any other front's page. Only a 404
 * carrying another of the app's codes (`unknown_cluster`) is the app refusing.
 */
export function isNoRoute(err: Pick<BackendRequestError, 'status' | 'code'>): boolean {
  return err.status === 404 && (err.code === undefined || err.code === NO_ROUTE_CODE);
}

/** One signed POST; a refusal or no answer thrown as `BackendRequestError`. */
async function postSigned(options: BackendClientOptions, url: string, body: string): Promise<{ response: Response; text: string }> {
  const signals = [AbortSignal.timeout(options.timeoutMs)];
  if (options.signal) signals.push(options.signal);
  let response: Response;
  let text: string;
  // Signed over the JSON, whatever the bytes travel as (body-encoding.ts).
  const post = async (gzip: boolean) => {
    const encoded = encodeRequestBody(body, gzip);
    const headers: Record<string, string> = { 'content-type': encoded.contentType, ...sign(body, options.secret(), { versions: options.versions ?? FORWARDER_VERSIONS }) };
    if (encoded.contentEncoding) headers['content-encoding'] = encoded.contentEncoding;
    const answer = await options.fetch(url, { method: 'POST', headers, body: encoded.body, signal: AbortSignal.any(signals) });
    options.codings?.learn(answer);
    return { answer, compressed: encoded.contentEncoding !== undefined };
  };
  try {
    let { answer, compressed } = await post(options.codings?.gzip ?? false);
    // A gzip'd body refused as such (415) was not acted on: the same body goes again as it is, at once.
    if (answer.status === 415 && compressed) {
      options.codings?.refused();
      await answer.body?.cancel();
      ({ answer } = await post(false));
    }
    response = answer;
    text = await response.text();
  } catch (err) {
    const name = err instanceof Error ? err.name : '';
    if (name === 'TimeoutError') throw new BackendRequestError('timeout', `no answer within ${options.timeoutMs} ms`);
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    throw new BackendRequestError('network', `${err instanceof Error ? err.message : String(err)}${cause}`);
  }
  if (!response.ok) {
    if (response.status === CONTRACT_REFUSAL_STATUS) {
      const refusal = ContractRefusalSchema.safeParse(safeJson(text));
      if (refusal.success) throw new BackendRequestError('contract', `HTTP ${response.status} ${refusal.data.error.message}`, response.status, refusal.data);
    }
    const parsed = ErrorResponseSchema.safeParse(safeJson(text));
    const detail = parsed.success ? `${parsed.data.error.code}: ${parsed.data.error.message}` : text.slice(0, 300);
    throw new BackendRequestError('http', `HTTP ${response.status} ${detail}`, response.status, undefined, parsed.success ? parsed.data.error.code : undefined);
  }
  return { response, text };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The result of every key sent, or `BackendRequestError` (`response`) when the answer lacks one:
 * an answer that does not match its request is not the backend's answer to it (the backend
 * answers each item), and nothing of it is applied.
 */
export function resultsOfKeys(keys: readonly string[], results: readonly Result[], status: number): Map<string, Result> {
  const matched = matchResults(keys, results);
  const missing = keys.filter((key) => matched.get(key) === undefined);
  if (missing.length > 0) {
    throw new BackendRequestError('response', `the answer has no result for ${missing.length} of the ${keys.length} items sent (${results.length} results; first missing: ${missing[0]})`, status);
  }
  return matched as Map<string, Result>;
}

/**
 * Pairs results with the keys sent, by position, checking each result's `key`; a result out
 * of place is found by its key. Keys without a result map to undefined.
 */
export function matchResults(keys: readonly string[], results: readonly Result[]): Map<string, Result | undefined> {
  const byKey = new Map<string, Result>();
  for (const result of results) if (!byKey.has(result.key)) byKey.set(result.key, result);
  const matched = new Map<string, Result | undefined>();
  keys.forEach((key, index) => {
    const positional = results[index];
    matched.set(key, positional?.key === key ? positional : byKey.get(key));
  });
  return matched;
}
