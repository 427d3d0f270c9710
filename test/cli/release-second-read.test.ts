/**
 * `cluster release --apply` reads the cluster twice: once to plan, once after its writes. A claim
 * that became held between the two (volhook's provisioning protection, no PV: its disk may still
 * land) keeps the registration, as one held at the first read does — with its control: the same
 * second read without it deregisters.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ReleaseCommand } from '../../lib/cli/args.js';
import type { ClusterView, ForwarderEvidence } from '../../lib/cli/index.js';
import { runRelease, type ReleaseKube } from '../../lib/cli/release.js';
import type { RegistrationStore } from '../../lib/cli/stores.js';

const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
const PROTECTION = 'volhook.io/provisioning-protection';
const quiet: ForwarderEvidence[] = [{ serverDate: 'Tue, 01 Sep 2026 12:00:30 GMT', deployment: { kind: 'absent' }, pods: [] }];
const empty: ClusterView = { claims: [], volumes: [], attachments: [], csiNodes: [] };
/** A claim volhook started provisioning: its protection, no PV yet. */
const provisioning: ClusterView = {
  ...empty,
  claims: [
    {
      metadata: { name: 'cache', namespace: 'shop', uid: '00000000-0000-4000-8000-0000000000c1', finalizers: ['kubernetes.io/pvc-protection', PROTECTION], annotations: { 'volume.kubernetes.io/storage-provisioner': 'ebs.csi.aws.com' } },
      spec: {},
    },
  ],
};

function world(secondRead: ClusterView) {
  const deleted: string[] = [];
  const store: RegistrationStore = {
    describe: (id) => `memory ${id}`,
    read: async (id) => ({ clusterId: id, secrets: [SECRET], region: 'us-east-1' }),
    create: async () => {},
    replace: async () => {},
    delete: async (id) => {
      deleted.push(id);
      return true;
    },
  };
  let reads = 0;
  const kube: ReleaseKube = {
    readClusterView: async () => (reads++ === 0 ? empty : secondRead),
    readForwarderEvidence: async () => quiet,
    applyEach: async () => new Map(),
  };
  const command: ReleaseCommand = { command: 'release', clusterId: 'c1', target: { kind: 'file', path: 'unused.json' }, targetGiven: true, kube: {}, apply: true, json: true } as ReleaseCommand;
  let stdout = '';
  let stderr = '';
  // The backend has heard nothing of the cluster (release-backend-heard.test.ts has the rest).
  const run = () => runRelease(command, new KubeConfig(), store, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) }, kube, async () => ({ known: true, where: 'memory' }));
  return { run, deleted, reads: () => reads, out: () => JSON.parse(stdout) as { refusals: string[]; held: unknown[]; registration: { status: string } }, err: () => stderr };
}

describe('cluster release --apply: the second read', () => {
  it('a claim held since the first read (provisioning protection, no PV) -> refused, the registration kept, exit 1', async () => {
    const w = world(provisioning);
    expect(await w.run()).toBe(1);
    expect(w.reads()).toBe(2);
    expect(w.out().refusals).toEqual([expect.stringMatching(/^after the writes: claim shop\/cache: volhook is provisioning it: .*run the forwarder until volhook settles it/)]);
    expect(w.out().held).toMatchObject([{ namespace: 'shop', name: 'cache' }]);
    expect(w.out().registration.status).toBe('kept');
    expect(w.deleted).toEqual([]);
  });

  it('the control: nothing held at the second read either -> deregistered, exit 0', async () => {
    const w = world(empty);
    expect(await w.run()).toBe(0);
    expect(w.out().refusals).toEqual([]);
    expect(w.out().registration.status).toBe('removed');
    expect(w.deleted).toEqual(['c1']);
  });
});
