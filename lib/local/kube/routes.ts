/** Maps request paths onto what is served; pure, so routing is tested without a socket. */
import { DEFAULT_SERVED, groupResources, type ResourceInfo, type ServedResources } from './resources.js';

export type Route =
  | { kind: 'version' | 'health' | 'api' | 'apis' | 'openapi-v3' | 'openapi-v2' }
  | { kind: 'group'; group: string }
  | { kind: 'resources'; group: string }
  | { kind: 'openapi-v3-group'; group: string }
  | ResourceRoute
  | { kind: 'unknown' };

export interface ResourceRoute {
  kind: 'resource';
  info: ResourceInfo;
  namespace?: string;
  name?: string;
  subresource?: 'status';
  /** The legacy `/watch/` path prefix was used. */
  watch: boolean;
}

const UNKNOWN = { kind: 'unknown' } as const;

function resourceRoute(group: string, segments: string[], served: ServedResources): Route {
  const infos = groupResources(group, served);
  let watch = false;
  if (segments[0] === 'watch') {
    watch = true;
    segments = segments.slice(1);
  }
  let namespace: string | undefined;
  const nested = segments[0] === 'namespaces' && segments.length >= 3 ? infos.find((i) => i.resource === segments[2]) : undefined;
  if (nested) {
    if (!nested.namespaced) return UNKNOWN;
    namespace = segments[1];
    segments = segments.slice(2);
  }
  const [resource, name, subresource, ...rest] = segments;
  const info = infos.find((i) => i.resource === resource);
  if (!info || rest.length > 0) return UNKNOWN;
  if (subresource !== undefined && (subresource !== 'status' || !info.status)) return UNKNOWN;
  if (info.namespaced && namespace === undefined && name !== undefined) return UNKNOWN;
  const route: ResourceRoute = { kind: 'resource', info, watch };
  if (namespace !== undefined) route.namespace = namespace;
  if (name !== undefined) route.name = name;
  if (subresource !== undefined) route.subresource = 'status';
  return route;
}

/** `served`: the resources this server serves; any other path is unknown (404), as on a cluster without the CRD. */
export function route(pathname: string, served: ServedResources = DEFAULT_SERVED): Route {
  let segments: string[];
  try {
    segments = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return UNKNOWN;
  }
  const [first, second, third] = segments;
  switch (first) {
    case 'version':
      return segments.length === 1 ? { kind: 'version' } : UNKNOWN;
    case 'healthz':
    case 'livez':
    case 'readyz':
      return { kind: 'health' };
    case 'openapi':
      if (second === 'v2' && segments.length === 2) return { kind: 'openapi-v2' };
      if (second !== 'v3') return UNKNOWN;
      if (segments.length === 2) return { kind: 'openapi-v3' };
      if (third === 'api' && segments[3] === 'v1' && segments.length === 4) return { kind: 'openapi-v3-group', group: '' };
      if (third === 'apis' && segments[4] === 'v1' && segments.length === 5) return { kind: 'openapi-v3-group', group: segments[3] as string };
      return UNKNOWN;
    case 'api':
      if (segments.length === 1) return { kind: 'api' };
      if (second !== 'v1') return UNKNOWN;
      return segments.length === 2 ? { kind: 'resources', group: '' } : resourceRoute('', segments.slice(2), served);
    case 'apis':
      if (segments.length === 1) return { kind: 'apis' };
      if (groupResources(second as string, served).length === 0 || second === '') return UNKNOWN;
      if (segments.length === 2) return { kind: 'group', group: second as string };
      if (third !== 'v1') return UNKNOWN;
      return segments.length === 3 ? { kind: 'resources', group: second as string } : resourceRoute(second as string, segments.slice(3), served);
    default:
      return UNKNOWN;
  }
}
