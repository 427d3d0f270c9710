/**
 * release judges every forwarder found, each where it is: the chart names its objects after the
 * Helm release, in the release's namespace (`helm install vh … -n storage` → `storage/vh`).
 */
import { describe, expect, it } from 'vitest';
import { judgeForwarder, type ForwarderEvidence } from '../../lib/cli/index.js';

const SERVER_NOW = 'Tue, 01 Sep 2026 12:00:30 GMT';
const ago = (s: number) => new Date(Date.parse(SERVER_NOW) - s * 1000).toISOString();
const defaultPlace: ForwarderEvidence = { serverDate: SERVER_NOW, deployment: { kind: 'absent' }, pods: [] };
const vh: ForwarderEvidence = {
  where: { namespace: 'storage', name: 'vh' },
  serverDate: SERVER_NOW,
  lease: { holderIdentity: 'vh-7d9f-abc', leaseDurationSeconds: 15, times: [ago(2)] },
  deployment: { kind: 'present', replicas: 2, readyReplicas: 2, helm: { name: 'vh', namespace: 'storage' } },
  pods: [{ name: 'vh-7d9f-abc', phase: 'Running' }],
  configMap: { clusterId: 'c1', helm: { name: 'vh', namespace: 'storage' } },
};

describe('judgeForwarder over every forwarder found', () => {
  it('the chart as release vh in storage -> refused naming storage/vh (Lease, Deployment, pod), uninstall by its release; the default place seen as empty', () => {
    const verdict = judgeForwarder([defaultPlace, vh], 'c1');
    expect(verdict.refusals).toEqual([
      expect.stringMatching(/^Lease storage\/vh is held by vh-7d9f-abc, last written 2 s before/),
      'Deployment storage/vh wants 2 replica(s): uninstall the forwarder first',
      'pod storage/vh-7d9f-abc of the forwarder is Running: uninstall the forwarder first',
    ]);
    expect(verdict.seen).toContain('Deployment volhook-system/volhook-forwarder: none');
    expect(verdict.seen).toContain('ConfigMap storage/vh: VOLHOOK_CLUSTER_ID=c1');
    expect(verdict.uninstall).toContain('helm uninstall vh -n storage');
    expect(verdict.uninstall).toContain('kubectl -n storage delete lease/vh secret/vh --ignore-not-found (or the namespace, once nothing else is in it)');
  });

  it('its ConfigMap names another cluster -> refused naming storage/vh; the default-named forwarder alone still refused as before', () => {
    const other = { ...vh, lease: undefined, deployment: { kind: 'absent' } as const, pods: [], configMap: { clusterId: 'other' } };
    expect(judgeForwarder([defaultPlace, other], 'c1').refusals).toEqual([expect.stringMatching(/^ConfigMap storage\/vh configures the forwarder for cluster "other", not "c1"/)]);
    const defaultRunning: ForwarderEvidence = { ...defaultPlace, deployment: { kind: 'present', replicas: 1, readyReplicas: 1 } };
    expect(judgeForwarder([defaultRunning], 'c1').refusals).toEqual(['Deployment volhook-system/volhook-forwarder wants 1 replica(s): uninstall the forwarder first']);
    expect(judgeForwarder([defaultPlace], 'c1').refusals).toEqual([]);
  });

  it('a Lease the ConfigMap names (VOLHOOK_LEASE_NAME) -> judged by that name', () => {
    const renamed: ForwarderEvidence = { ...vh, leaseName: 'vh-leader', deployment: { kind: 'absent' }, pods: [] };
    expect(judgeForwarder([renamed], 'c1').refusals).toEqual([expect.stringMatching(/^Lease storage\/vh-leader is held by/)]);
  });
});
