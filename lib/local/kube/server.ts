/**
 * The HTTP face of the store: enough of the Kubernetes REST API for `@kubernetes/client-node`
 * and `kubectl` (discovery, CRUD, patch, server-side apply, dry run, field validation, status
 * subresources, watch). JSON answers; protobuf is never advertised, so clients fall back to JSON
 * (but for the few bodies typed clients send as protobuf regardless: protobuf.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen } from '../../http/index.js';
import { OPENAPI_V2_PROTOBUF, emptyOpenApiV2Document } from './protobuf.js';
import {
  SERVER_VERSION,
  apiGroupDocument,
  apiGroupList,
  apiResourceList,
  apiVersions,
  openApiV3Document,
  openApiV3Root,
  versionInfo,
} from './discovery.js';
import { KubeApiError } from './errors.js';
import { handleResource, type ApiRequest } from './handlers.js';
import { servedResources, type InstalledCrds } from './resources.js';
import { route, type ResourceRoute } from './routes.js';
import type { LocalObjectStore } from './store.js';
import { toTable } from './table.js';
import type { ListOptions, ObjectStore } from './types.js';

export interface KubeApiServerOptions {
  store: ObjectStore;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the local API has no authentication and must not be reachable from elsewhere. */
  host?: string;
  /** Watches without `timeoutSeconds` end after this long, as the real server's min-request-timeout. Default 1800. */
  watchTimeoutSeconds?: number;
  /** Interval of BOOKMARK events for watches that allow them. Default 60. */
  bookmarkIntervalSeconds?: number;
  /** Called once per finished request, e.g. to log `GET /api/v1/pods 200`. */
  onRequest?: (line: { method: string; url: string; status: number; userAgent?: string }) => void;
  /**
   * Serve prometheus-operator's `monitoring.coreos.com/v1` ServiceMonitors, as a cluster with
   * its CRDs installed does. Default false: a cluster without the operator has no such kind,
   * and kubectl then says so for a manifest that has one.
   */
  serviceMonitors?: boolean;
  /**
   * Serve the CSI snapshot CRDs (`snapshot.storage.k8s.io/v1`). Default true; false is a
   * cluster without them, whose snapshot paths answer 404 until `installCrds` adds them.
   */
  snapshots?: boolean;
}

export interface KubeApiServer {
  url: string;
  port: number;
  /** Installs optional CRDs while running: their resources are served from now on, as after `kubectl apply` of the CRDs. */
  installCrds(crds: InstalledCrds): void;
  /** Ends open watches, drops keep-alive connections and stops listening. */
  close(): Promise<void>;
}

const MAX_BODY = 3 * 1024 * 1024;

/** RFC 7234 warning headers as kube-apiserver writes them: code 299, agent `-`, the text quoted. */
function warningHeaders(warnings: readonly string[]): string[] {
  return warnings.map((w) => `299 - "${w.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\r\n]+/g, ' ')}"`);
}

function sendJson(res: ServerResponse, status: number, body: unknown, warnings: readonly string[] = []): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number | string[]> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-cache, private' };
  if (warnings.length > 0) headers.Warning = warningHeaders(warnings);
  res.writeHead(status, headers);
  res.end(text);
}

function sendError(res: ServerResponse, err: unknown): void {
  const apiError = err instanceof KubeApiError ? err : new KubeApiError('InternalError', `an error on the server ("${(err as Error)?.message ?? String(err)}") has prevented the request from succeeding`);
  sendJson(res, apiError.code, apiError.toStatus());
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new KubeApiError('BadRequest', 'the request body is too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Whether the Accept header lets us answer JSON (clients that send only protobuf get 406). */
function acceptsJson(accept: string | undefined): boolean {
  if (!accept) return true;
  return accept.split(',').some((part) => {
    const type = (part.split(';')[0] ?? '').trim();
    return type === 'application/json' || type === '*/*' || type === 'application/*' || type === '';
  });
}

function wantsTable(accept: string | undefined): boolean {
  return !!accept && accept.split(',').some((part) => /(^|;)\s*as=Table\s*(;|$)/.test(part) && part.includes('application/json'));
}

function isLocalStore(store: ObjectStore): store is LocalObjectStore {
  return typeof (store as Partial<LocalObjectStore>).deleteCollection === 'function';
}

export async function startKubeApiServer(options: KubeApiServerOptions): Promise<KubeApiServer> {
  if (!isLocalStore(options.store)) throw new Error('startKubeApiServer needs a store from createObjectStore()');
  const store: LocalObjectStore = options.store;
  const host = options.host ?? '127.0.0.1';
  const watchTimeout = options.watchTimeoutSeconds ?? 1800;
  const bookmarkInterval = options.bookmarkIntervalSeconds ?? 60;
  let installed: InstalledCrds = { serviceMonitors: options.serviceMonitors ?? false, snapshots: options.snapshots ?? true };
  let served = servedResources(installed);
  const closers = new Set<() => void>();
  let address = `${host}:0`;

  function serveWatch(res: ServerResponse, resource: ResourceRoute, query: URLSearchParams, table: boolean): void {
    const listOptions: ListOptions & { resourceVersion?: string } = {};
    if (resource.namespace) listOptions.namespace = resource.namespace;
    for (const key of ['labelSelector', 'fieldSelector', 'resourceVersion'] as const) {
      const value = query.get(key);
      if (value) listOptions[key] = value;
    }
    const pending: string[] = [];
    let started = false;
    const write = (event: { type: string; object: unknown }): void => {
      if (res.writableEnded || res.destroyed) return; // a write after end would be an unhandled 'error'
      const line = `${JSON.stringify(event)}\n`;
      if (started) res.write(line);
      else pending.push(line);
    };
    const start = (): void => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
      started = true;
      for (const line of pending.splice(0)) res.write(line);
    };
    let unsubscribe: () => void;
    try {
      unsubscribe = store.watch(resource.info.resource, listOptions, (event) => {
        write(table ? { type: event.type, object: toTable(resource.info.resource, [event.object]) } : event);
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 410) {
        // As the watch cache does: a 200 stream carrying one ERROR event, then the end.
        write({ type: 'ERROR', object: err.toStatus() });
        start();
        res.end();
        return;
      }
      throw err;
    }
    start();
    const seconds = Number(query.get('timeoutSeconds'));
    const bookmarks = query.get('allowWatchBookmarks') === 'true';
    const bookmark = (): void => write({ type: 'BOOKMARK', object: { kind: resource.info.kind, apiVersion: resource.info.group ? `${resource.info.group}/v1` : 'v1', metadata: { resourceVersion: store.resourceVersion } } });
    const finish = (): void => {
      if (bookmarks) bookmark();
      cleanup();
      res.end();
    };
    const timer = setTimeout(finish, (Number.isFinite(seconds) && seconds > 0 ? seconds : watchTimeout) * 1000);
    const ticker = bookmarks ? setInterval(bookmark, bookmarkInterval * 1000) : undefined;
    function cleanup(): void {
      unsubscribe();
      clearTimeout(timer);
      if (ticker) clearInterval(ticker);
      closers.delete(finish);
    }
    closers.add(finish);
    res.on('close', cleanup);
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const accept = req.headers.accept;
    const method = req.method ?? 'GET';
    const target = route(url.pathname, served);
    // OpenAPI v2 is protobuf-only for kubectl (an empty document: see emptyOpenApiV2Document).
    if (target.kind !== 'openapi-v2' && !acceptsJson(accept)) throw new KubeApiError('NotAcceptable', 'only application/json is served');
    const doc = (body: object | undefined): void => {
      if (!body || method !== 'GET') throw new KubeApiError('NotFound', 'the server could not find the requested resource');
      sendJson(res, 200, body);
    };
    switch (target.kind) {
      case 'version':
        return doc(versionInfo());
      case 'health':
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
        return;
      case 'api':
        return doc(apiVersions(address));
      case 'apis':
        return doc(apiGroupList(served));
      case 'group':
        return doc(apiGroupDocument(target.group, served));
      case 'resources':
        return doc(apiResourceList(target.group, served));
      case 'openapi-v3':
        return doc(openApiV3Root(served));
      case 'openapi-v3-group':
        return doc(openApiV3Document(target.group, served));
      case 'openapi-v2': {
        if (method !== 'GET') return doc(undefined);
        const body = emptyOpenApiV2Document(SERVER_VERSION.gitVersion);
        res.writeHead(200, { 'Content-Type': OPENAPI_V2_PROTOBUF, 'Content-Length': body.length, 'Cache-Control': 'no-cache, private' }).end(body);
        return;
      }
      case 'unknown':
        return doc(undefined);
      case 'resource': {
        const table = wantsTable(accept);
        const watchParam = url.searchParams.get('watch');
        const isWatch = target.watch || watchParam === 'true' || watchParam === '1';
        if (isWatch) {
          if (method !== 'GET' || target.name !== undefined) throw new KubeApiError('MethodNotAllowed', 'watch needs GET on a collection');
          return serveWatch(res, target, url.searchParams, table);
        }
        const body = method === 'GET' ? Buffer.alloc(0) : await readBody(req);
        const contentType = ((req.headers['content-type'] ?? '').split(';')[0] ?? '').trim().toLowerCase();
        const request: ApiRequest = { method, route: target, query: url.searchParams, contentType, body, table };
        if (req.headers['user-agent'] !== undefined) request.userAgent = req.headers['user-agent'];
        const response = handleResource(store, request);
        sendJson(res, response.status, response.body, response.warnings);
        return;
      }
    }
  }

  const server = createServer((req, res) => {
    if (options.onRequest) {
      const userAgent = req.headers['user-agent'];
      res.on('finish', () => options.onRequest?.({ method: req.method ?? '', url: req.url ?? '', status: res.statusCode, ...(userAgent !== undefined && { userAgent }) }));
    }
    serve(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else sendError(res, err);
    });
  });
  const listening = await listen(server, options.port ?? 0, host);
  address = `${host}:${listening.port}`;
  return {
    url: listening.url,
    port: listening.port,
    installCrds(crds) {
      installed = { serviceMonitors: installed.serviceMonitors || crds.serviceMonitors, snapshots: installed.snapshots || crds.snapshots };
      served = servedResources(installed);
    },
    close: async () => {
      for (const finish of [...closers]) finish();
      await listening.close();
    },
  };
}
