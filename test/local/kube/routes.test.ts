import { describe, expect, it } from 'vitest';
import { servedResources } from '../../../lib/local/kube/resources.js';
import { route } from '../../../lib/local/kube/routes.js';
import { humanDuration } from '../../../lib/local/kube/table.js';

const summary = (path: string) => {
  const r = route(path);
  return r.kind === 'resource' ? { resource: r.info.resource, namespace: r.namespace, name: r.name, subresource: r.subresource, watch: r.watch } : r;
};

const summary2 = (r: ReturnType<typeof route>) => (r.kind === 'resource' ? { resource: r.info.resource, namespace: r.namespace, name: r.name } : r);

describe('routes', () => {
  it('namespaced, cluster-scoped, status and legacy watch paths -> the resource, namespace, name and subresource', () => {
    expect(summary('/api/v1/namespaces/default/persistentvolumeclaims/data/status')).toEqual({ resource: 'persistentvolumeclaims', namespace: 'default', name: 'data', subresource: 'status', watch: false });
    expect(summary('/api/v1/namespaces/default/status')).toMatchObject({ resource: 'namespaces', name: 'default', subresource: 'status' });
    expect(summary('/api/v1/pods')).toMatchObject({ resource: 'pods', namespace: undefined, name: undefined });
    expect(summary('/apis/storage.k8s.io/v1/watch/volumeattachments')).toMatchObject({ resource: 'volumeattachments', watch: true });
    expect(summary('/apis/storage.k8s.io/v1')).toEqual({ kind: 'resources', group: 'storage.k8s.io' });
  });

  it('wrong scope, unknown group or a subresource a kind lacks -> unknown', () => {
    expect(route('/api/v1/namespaces/default/persistentvolumes')).toEqual({ kind: 'unknown' });
    expect(route('/api/v1/pods/by-name-without-namespace')).toEqual({ kind: 'unknown' });
    expect(route('/apis/storage.k8s.io/v1/storageclasses/gp3/status')).toEqual({ kind: 'unknown' });
    expect(route('/apis/batch/v1/jobs')).toEqual({ kind: 'unknown' });
    expect(route('/api/v1/persistentvolumeclaims')).toMatchObject({ kind: 'resource' });
  });

  it('ServiceMonitors -> a resource where the server serves them, unknown (404) where it does not', () => {
    const path = '/apis/monitoring.coreos.com/v1/namespaces/default/servicemonitors/web';
    expect(route(path)).toEqual({ kind: 'unknown' });
    expect(route('/apis/monitoring.coreos.com')).toEqual({ kind: 'unknown' });
    expect(summary2(route(path, servedResources({ serviceMonitors: true })))).toEqual({ resource: 'servicemonitors', namespace: 'default', name: 'web' });
    expect(route('/apis/apps/v1/namespaces/default/deployments')).toMatchObject({ kind: 'resource' });
  });

  it('ages -> formatted as kubectl prints them', () => {
    expect([5_000, 150_000, 1_800_000, 7_500_000, 15_000_000, 100 * 3_600_000].map(humanDuration)).toEqual(['5s', '2m30s', '30m', '125m', '4h10m', '4d4h']);
  });
});
