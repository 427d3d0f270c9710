/**
 * REST verbs on one resource, from a parsed request to a status and a body. No sockets here:
 * the server feeds requests in, so every answer can be reasoned about (and tested) as data.
 */
import { decodeApplyBody } from './apply-body.js';
import { KubeApiError, badRequest, notFound } from './errors.js';
import { duplicateJsonFields } from './field-validation.js';
import { isObject } from './json.js';
import { decodeProtobufDeleteOptions, decodeProtobufObject } from './protobuf.js';
import { optionsFromQuery, writeOptions, type OptionSource, type RequestOptions, type WriteVerb } from './request-options.js';
import { apiVersionOf } from './resources.js';
import type { ResourceRoute } from './routes.js';
import { storageKey, type DeleteOptions, type LocalObjectStore } from './store.js';
import { toTable, type IncludeObject } from './table.js';
import type { KubeObject, ListOptions, PatchType, WriteOptions } from './types.js';

export interface ApiRequest {
  method: string;
  route: ResourceRoute;
  query: URLSearchParams;
  /** Media type of the body without parameters, lower case; '' when absent. */
  contentType: string;
  /** Raw body (empty when none). */
  body: Buffer;
  /** The client asked for `as=Table`. */
  table: boolean;
  /** Names the field manager of a write that names none, as the API server does. */
  userAgent?: string;
}

export interface ApiResponse {
  status: number;
  body: unknown;
  /** Sent as `Warning: 299 - "…"` headers (kubectl prints them as `Warning: …`). */
  warnings?: string[];
}

const APPLY = 'application/apply-patch+yaml';

const PATCH_TYPES: Record<string, PatchType | 'apply'> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  [APPLY]: 'apply',
};

function unsupportedMediaType(contentType: string): KubeApiError {
  return new KubeApiError(
    'UnsupportedMediaType',
    `the body of the request was in an unknown format (${contentType || 'none'}) - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, ${APPLY}`,
  );
}

const methodNotAllowed = (): KubeApiError => new KubeApiError('MethodNotAllowed', 'the server does not allow this method on the requested resource');

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch (err) {
    throw badRequest(`error decoding request body: ${(err as Error).message}`);
  }
}

/** A create or update body, and the fields it repeats (a strict decode's `duplicate field` errors). */
function objectBody(request: ApiRequest): { object: KubeObject; duplicates: string[] } {
  let body: unknown;
  let duplicates: string[] = [];
  if (request.contentType === 'application/vnd.kubernetes.protobuf') body = decodeProtobufObject(request.body);
  else if (!request.contentType || request.contentType === 'application/json') {
    const text = request.body.toString('utf8');
    body = parseJson(text);
    duplicates = duplicateJsonFields(text);
  } else throw unsupportedMediaType(request.contentType);
  if (!isObject(body)) throw badRequest('the request body must be a JSON object');
  if (!isObject(body.metadata)) body.metadata = {};
  return { object: body as KubeObject, duplicates };
}

/** The store's options for one write: dry run, manager, field validation and where its warnings go. */
function storeOptions(options: RequestOptions, warnings: string[], duplicates: string[] = []): WriteOptions {
  const out: WriteOptions = { fieldManager: options.fieldManager, fieldValidation: options.fieldValidation, warnings };
  if (options.dryRun) out.dryRun = true;
  if (duplicates.length > 0) out.duplicateFields = duplicates;
  return out;
}

/** DELETE takes its options from a DeleteOptions body when there is one, else from the query. */
function deleteSource(request: ApiRequest, body: unknown): OptionSource {
  const query = optionsFromQuery(request.query);
  if (!isObject(body)) return query;
  const dryRun = Array.isArray(body.dryRun) ? body.dryRun.map(String) : [];
  return { ...query, dryRun };
}

/** Rules of `EnsureObjectNamespaceMatchesRequestNamespace`: fill in, clear, or refuse. */
function alignNamespace(request: ApiRequest, object: KubeObject): void {
  const expected = request.route.info.namespaced ? request.route.namespace : undefined;
  const actual = object.metadata.namespace;
  if (!actual || actual === expected) {
    if (expected) object.metadata.namespace = expected;
    return;
  }
  if (expected === undefined) {
    delete object.metadata.namespace;
    return;
  }
  throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
}

function listOptions(request: ApiRequest): ListOptions {
  const options: ListOptions = {};
  if (request.route.namespace) options.namespace = request.route.namespace;
  const labelSelector = request.query.get('labelSelector');
  const fieldSelector = request.query.get('fieldSelector');
  if (labelSelector) options.labelSelector = labelSelector;
  if (fieldSelector) options.fieldSelector = fieldSelector;
  return options;
}

function includeObject(request: ApiRequest): IncludeObject {
  const value = request.query.get('includeObject');
  return value === 'None' || value === 'Object' ? value : 'Metadata';
}

function encodeContinue(key: string, rv: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: Number(rv), start: `${key}\u0000` })).toString('base64url');
}

function decodeContinue(token: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { start?: unknown };
    if (typeof parsed.start === 'string') return parsed.start;
  } catch {
    // fall through
  }
  throw badRequest(`continue key is not valid: ${token}`);
}

function list(store: LocalObjectStore, request: ApiRequest): ApiResponse {
  const { info } = request.route;
  const start = request.query.get('continue');
  const from = start ? decodeContinue(start) : undefined;
  const limit = Number(request.query.get('limit') ?? '0');
  const { items: page, remaining, resourceVersion } = store.listPage(info.resource, listOptions(request), {
    ...(from !== undefined ? { from } : {}),
    limit: Number.isInteger(limit) && limit > 0 ? limit : 0,
  });
  const metadata: Record<string, unknown> = { resourceVersion };
  if (remaining > 0) {
    metadata.remainingItemCount = remaining;
    metadata.continue = encodeContinue(storageKey(page[page.length - 1] as KubeObject), resourceVersion);
  }
  if (request.table) {
    const table = toTable(info.resource, page, { resourceVersion, includeObject: includeObject(request) }) as { metadata: object };
    table.metadata = metadata;
    return { status: 200, body: table };
  }
  return { status: 200, body: { kind: info.listKind, apiVersion: apiVersionOf(info), metadata, items: page } };
}

function deleteOptions(request: ApiRequest): DeleteOptions {
  const options: DeleteOptions = {};
  const text = request.body.toString('utf8');
  const body =
    request.contentType === 'application/vnd.kubernetes.protobuf' ? decodeProtobufDeleteOptions(request.body)
    : text.trim() ? parseJson(text)
    : undefined;
  if (isObject(body) && isObject(body.preconditions)) {
    const { uid, resourceVersion } = body.preconditions;
    options.preconditions = {};
    if (typeof uid === 'string') options.preconditions.uid = uid;
    if (typeof resourceVersion === 'string') options.preconditions.resourceVersion = resourceVersion;
  }
  if (writeOptions('delete', deleteSource(request, body)).dryRun) options.dryRun = true;
  return options;
}

/** Runs one non-watch request against the store. Throws `KubeApiError` for API errors. */
export function handleResource(store: LocalObjectStore, request: ApiRequest): ApiResponse {
  const { route, method } = request;
  const { info } = route;
  const warnings: string[] = [];
  const single = (object: KubeObject, status = 200): ApiResponse => {
    const body = request.table ? toTable(info.resource, [object], { includeObject: includeObject(request) }) : object;
    return warnings.length > 0 ? { status, body, warnings } : { status, body };
  };
  const options = (verb: WriteVerb, context: { apply?: boolean; name?: string } = {}): RequestOptions =>
    writeOptions(verb, optionsFromQuery(request.query), { ...context, ...(request.userAgent !== undefined ? { userAgent: request.userAgent } : {}) });

  if (route.name === undefined) {
    switch (method) {
      case 'GET':
        return list(store, request);
      case 'POST': {
        if (info.namespaced && !route.namespace) throw methodNotAllowed();
        const write = options('create');
        const { object, duplicates } = objectBody(request);
        alignNamespace(request, object);
        return single(store.create(info.resource, object, storeOptions(write, warnings, duplicates)), 201);
      }
      case 'DELETE': {
        if (info.namespaced && !route.namespace) throw methodNotAllowed();
        const { dryRun } = deleteOptions(request);
        const deleted = store.deleteCollection(info.resource, listOptions(request), dryRun ? { dryRun } : {});
        return { status: 200, body: { kind: info.listKind, apiVersion: apiVersionOf(info), metadata: { resourceVersion: store.resourceVersion }, items: deleted } };
      }
      default:
        throw methodNotAllowed();
    }
  }

  const name = route.name;
  switch (method) {
    case 'GET': {
      const object = store.get(info.resource, name, route.namespace);
      if (!object) throw notFound(info, name);
      return single(object);
    }
    case 'PUT': {
      const write = options('update', { name });
      const { object, duplicates } = objectBody(request);
      alignNamespace(request, object);
      if (object.metadata.name !== name) throw badRequest(`the name of the object (${String(object.metadata.name ?? '')}) does not match the name on the URL (${name})`);
      const opts = storeOptions(write, warnings, duplicates);
      return single(route.subresource ? store.updateStatus(info.resource, object, opts) : store.update(info.resource, object, opts));
    }
    case 'PATCH': {
      const type = PATCH_TYPES[request.contentType];
      if (!type) throw unsupportedMediaType(request.contentType);
      const write = options('patch', { apply: type === 'apply' });
      const subresource = route.subresource ? { subresource: 'status' as const } : {};
      if (type === 'apply') {
        const config = decodeApplyBody(request.body.toString('utf8'), write.fieldValidation, warnings);
        if (isObject(config.metadata)) alignNamespace(request, config as KubeObject);
        const existed = store.get(info.resource, name, route.namespace) !== undefined;
        const applied = store.apply(info.resource, name, route.namespace, config, {
          fieldManager: write.fieldManager,
          force: write.force,
          ...(write.dryRun ? { dryRun: true } : {}),
          ...subresource,
        });
        return single(applied, existed ? 200 : 201);
      }
      const text = request.body.toString('utf8');
      const patch = parseJson(text);
      const duplicates = type === 'json' ? [] : duplicateJsonFields(text);
      return single(store.patch(info.resource, name, route.namespace, type, patch, { ...storeOptions(write, warnings, duplicates), ...subresource }));
    }
    case 'DELETE': {
      const deleteOpts = deleteOptions(request);
      const result = store.delete(info.resource, name, route.namespace, deleteOpts);
      const pending = deleteOpts.dryRun ? (result.metadata.finalizers ?? []).length > 0 || info.resource === 'namespaces' : store.get(info.resource, name, route.namespace) !== undefined;
      if (pending || info.returnsDeletedObject) return single(result);
      return {
        status: 200,
        body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, ...(info.group ? { group: info.group } : {}), kind: info.resource, uid: result.metadata.uid } },
      };
    }
    default:
      throw methodNotAllowed();
  }
}
