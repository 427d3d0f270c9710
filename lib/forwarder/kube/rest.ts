/**
 * Requests to the Kubernetes API over `node:http` / `node:https`, JSON in and out, with one
 * keep-alive agent per protocol: the transport under the forwarder's lists, watches, reads and
 * writes (informers.ts, clients.ts). An answer outside 2xx throws `KubeApiError`, which has
 * the shape `isApiError` (lib/kube/errors.ts) recognises, as client-node's `ApiException` has.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { VOLHOOK_VERSION } from '../../contract/version.js';
import type { KubeAccess } from './access.js';

/**
 * What the forwarder calls itself to the API server. The server names the field manager of a
 * write that names none by the User-Agent's part before the first `/`, so managedFields and
 * audit logs show `volhook-forwarder` (not `unknown`, as without one).
 */
export const USER_AGENT = `volhook-forwarder/${VOLHOOK_VERSION}`;

/** An answer of the API server outside 2xx: `code` the HTTP status, `body` its Status (parsed). */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  constructor(
    readonly code: number,
    readonly body: unknown,
    method: string,
    path: string,
  ) {
    const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
    super(`${method} ${path}: HTTP ${code}${typeof message === 'string' ? `: ${message}` : ''}`);
  }
}

class ReusedSocketError extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

export const MediaTypes = {
  json: 'application/json',
  jsonPatch: 'application/json-patch+json',
  mergePatch: 'application/merge-patch+json',
} as const;
export type MediaType = (typeof MediaTypes)[keyof typeof MediaTypes];

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Of the body; JSON by default. */
  contentType?: MediaType;
  signal?: AbortSignal;
}

/** No answer within this long fails a request (not a watch): a hung list must not hang an informer. */
export const REQUEST_TIMEOUT_MS = 60_000;

export interface KubeRest {
  readonly server: string;
  /** One request; the answer's JSON (undefined for an empty body). */
  request<T>(method: string, path: string, options?: RequestOptions): Promise<T>;
  /** A GET whose 200 answer is streamed (a watch); other answers throw `KubeApiError`. */
  stream(path: string, options: { query?: RequestOptions['query']; signal: AbortSignal }): Promise<IncomingMessage>;
}

export function kubeRest(access: KubeAccess): KubeRest {
  const base = new URL(access.server);
  const secure = base.protocol === 'https:';
  if (!secure && base.protocol !== 'http:') throw new Error(`unsupported API server URL ${access.server}`);
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;

  function urlOf(path: string, query: RequestOptions['query']): URL {
    const url = new URL(access.server + path);
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    return url;
  }

  /**
   * A request on a kept-alive connection the server had just closed fails before the server
   * saw it (ECONNRESET / EPIPE on a reused socket): sent once more, on a new connection, as
   * Node's documentation advises.
   */
  async function open(method: string, path: string, options: RequestOptions, timeoutMs: number | undefined): Promise<IncomingMessage> {
    try {
      return await openOnce(method, path, options, timeoutMs);
    } catch (err) {
      if (!(err instanceof ReusedSocketError)) throw err;
      return openOnce(method, path, options, timeoutMs);
    }
  }

  async function openOnce(method: string, path: string, options: RequestOptions, timeoutMs: number | undefined): Promise<IncomingMessage> {
    const access_ = await access.requestOptions();
    const headers: OutgoingHttpHeaders = { Accept: MediaTypes.json, 'User-Agent': USER_AGENT, ...access_.headers };
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['Content-Type'] = options.contentType ?? MediaTypes.json;
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    const { signal } = options;
    signal?.throwIfAborted();
    return new Promise<IncomingMessage>((resolve, reject) => {
      const { headers: _ignored, ...tls } = access_;
      const req = send(urlOf(path, options.query), { method, headers, agent, ...tls, ...(signal ? { signal } : {}) }, resolve);
      req.on('error', (err: NodeJS.ErrnoException) => {
        reject(req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE') ? new ReusedSocketError(err) : err);
      });
      if (timeoutMs !== undefined) {
        req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      }
      req.end(payload);
    });
  }

  async function readBody(res: IncomingMessage): Promise<string> {
    res.setEncoding('utf8');
    let text = '';
    for await (const chunk of res) text += chunk as string;
    return text;
  }

  async function fail(method: string, path: string, res: IncomingMessage): Promise<never> {
    const text = await readBody(res);
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not a Status: the text as it came
    }
    throw new KubeApiError(res.statusCode ?? 0, body, method, path);
  }

  return {
    server: access.server,
    async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
      const res = await open(method, path, options, REQUEST_TIMEOUT_MS);
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) return fail(method, path, res);
      const text = await readBody(res);
      return (text ? JSON.parse(text) : undefined) as T;
    },
    async stream(path, options) {
      const res = await open('GET', path, options, undefined);
      if (res.statusCode !== 200) return fail('GET', path, res);
      return res;
    },
  };
}
