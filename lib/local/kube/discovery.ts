/**
 * Discovery and OpenAPI documents. kubectl reads discovery before any verb; it needs
 * OpenAPI v3 only to learn that the server validates fields itself (the `fieldValidation`
 * parameter on each PATCH, which it then sends as Strict by default), otherwise it insists on
 * client-side validation from a full schema. We publish just that, and no request bodies, so
 * client-side apply falls back to the strategic-merge metadata compiled into kubectl. For a
 * kind OpenAPI v3 does not list (a CRD the cluster lacks) kubectl reads OpenAPI v2, which is
 * served empty (protobuf.ts), so it goes on to report the kind as not served.
 */
import { createHash } from 'node:crypto';
import { DEFAULT_SERVED, apiVersionOf, groupResources, type ResourceInfo, type ServedResources } from './resources.js';

export const SERVER_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-volhook' };

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function versionInfo(): Record<string, string> {
  return {
    ...SERVER_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2024-12-11T00:00:00Z',
    goVersion: 'go1.23.3',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

/** The served groups, core ('') first. */
export function groups(served: ServedResources = DEFAULT_SERVED): string[] {
  return [...new Set(served.map((r) => r.group))];
}

export function apiVersions(serverAddress: string): object {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function apiGroup(name: string): object {
  const version = { groupVersion: `${name}/v1`, version: 'v1' };
  return { name, versions: [version], preferredVersion: version };
}

export function apiGroupList(served: ServedResources = DEFAULT_SERVED): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups(served).filter(Boolean).map(apiGroup) };
}

export function apiGroupDocument(name: string, served: ServedResources = DEFAULT_SERVED): object | undefined {
  return groups(served).includes(name) && name ? { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(name) } : undefined;
}

function storageVersionHash(info: ResourceInfo): string {
  return createHash('sha256').update(`${apiVersionOf(info)}/${info.kind}`).digest('base64').slice(0, 11);
}

export function apiResourceList(group: string, served: ServedResources = DEFAULT_SERVED): object | undefined {
  const infos = groupResources(group, served);
  if (infos.length === 0) return undefined;
  const resources = infos.flatMap((info) => {
    const main = {
      name: info.resource,
      singularName: info.singular,
      namespaced: info.namespaced,
      kind: info.kind,
      verbs: VERBS,
      ...(info.shortNames.length ? { shortNames: info.shortNames } : {}),
      ...(info.categories.length ? { categories: info.categories } : {}),
      storageVersionHash: storageVersionHash(info),
    };
    const status = { name: `${info.resource}/status`, singularName: '', namespaced: info.namespaced, kind: info.kind, verbs: ['get', 'patch', 'update'] };
    return info.status ? [main, status] : [main];
  });
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/v1` : 'v1', resources };
}

function gvPath(group: string): string {
  return group ? `apis/${group}/v1` : 'api/v1';
}

/** `/openapi/v3`: where each group-version's document lives. */
export function openApiV3Root(served: ServedResources = DEFAULT_SERVED): object {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const group of groups(served)) {
    const path = gvPath(group);
    const hash = createHash('sha256').update(JSON.stringify(openApiV3Document(group, served))).digest('hex').slice(0, 32);
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash.toUpperCase()}` };
  }
  return { paths };
}

/** A group-version document listing, per kind, a PATCH that accepts `fieldValidation`. */
export function openApiV3Document(group: string, served: ServedResources = DEFAULT_SERVED): object | undefined {
  const infos = groupResources(group, served);
  if (infos.length === 0) return undefined;
  const paths: Record<string, object> = {};
  for (const info of infos) {
    const base = `/${gvPath(group)}${info.namespaced ? '/namespaces/{namespace}' : ''}/${info.resource}/{name}`;
    paths[base] = {
      patch: {
        operationId: `patch${info.namespaced ? 'Namespaced' : ''}${info.kind}`,
        parameters: [
          { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
        ],
        responses: { '200': { description: 'OK' } },
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group: info.group, version: info.version, kind: info.kind },
      },
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes (volhook local)', version: SERVER_VERSION.gitVersion }, paths, components: { schemas: {} } };
}
