/**
 * Drop-in sameness (issue 44): each claim of the matrix (matrix.ts) provisioned once by
 * volhook and once by the reference EBS CSI controller stack (aws-ebs-csi-driver v1.63.0 and
 * its chart's sidecars, lib/local/peer), each on a fresh real control plane and EC2 simulator,
 * then compared: the volume EC2 made (size, type, IOPS, throughput, encryption, KMS key, zone),
 * its tags, the PV, the claim's status and its Events' reasons. Every difference found must be
 * a row of docs/parameters.md's "Deliberate differences from the EBS CSI driver" table, and
 * every row must still be found.
 */
import { CoreV1Api, KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { build, EBS_CSI_BIN, readComponents } from '../../infra/tools/ebs-csi-build.js';
import { missingBinaries } from '../../lib/local/peer/ebs-csi.js';
import { startPeerStack } from '../../lib/local/peer/peer-stack.js';
import type { RealLocalStack } from '../../lib/local/stack/index.js';
import { realPlaneInputs } from '../../tools/kube/inputs.js';
import { waitFor } from '../e2e/support/wait.js';
import { startRealStack, withoutGo } from '../real-plane/support.js';
import { CASES, claimOf, differences, NS, outcome, type Difference, type Outcome } from './matrix.js';
import { listedDifferences, SECTION } from './listed.js';

/** Provisions the matrix on `stack` and returns each claim's outcome. */
async function runMatrix(stack: RealLocalStack): Promise<Record<string, Outcome>> {
  const kc = new KubeConfig();
  kc.loadFromString(stack.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const storage = kc.makeApiClient(StorageV1Api);
  const before = new Set(stack.simulator!.volumes().map((v) => v.id));
  await core.createNamespace({ body: { metadata: { name: NS } } });
  for (const c of CASES) await storage.createStorageClass({ body: c.storageClass });
  for (const c of CASES) await core.createNamespacedPersistentVolumeClaim({ namespace: NS, body: claimOf(c) });
  const claimEvents = async (name: string) => (await core.listNamespacedEvent({ namespace: NS })).items.filter((e) => e.involvedObject.kind === 'PersistentVolumeClaim' && e.involvedObject.name === name);
  const out: Record<string, Outcome> = {};
  for (const c of CASES) {
    const claim = await waitFor(
      async () => ({ claim: await core.readNamespacedPersistentVolumeClaim({ name: c.claim, namespace: NS }), events: await claimEvents(c.claim) }),
      ({ claim, events }) => (c.refused ? events.some((e) => e.type === 'Warning') : claim.status?.phase === 'Bound'),
      { what: `${c.claim} ${c.refused ? 'refused' : 'Bound'}`, timeoutMs: 180_000, report: (r) => [r?.claim.status?.phase, r?.events.map((e) => `${e.reason}: ${e.message}`)] },
    );
    // Let the provisioner's last Events land (ProvisioningSucceeded is written after the PV).
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const events = await claimEvents(c.claim);
    const pv = claim.claim.spec?.volumeName ? await core.readPersistentVolume({ name: claim.claim.spec.volumeName }) : undefined;
    const handle = pv?.spec?.csi?.volumeHandle ?? pv?.spec?.awsElasticBlockStore?.volumeID.split('/').pop();
    const volume = handle ? stack.simulator!.volume(handle) : undefined;
    out[c.claim] = outcome(c, { claim: await core.readNamespacedPersistentVolumeClaim({ name: c.claim, namespace: NS }), pv, volume, events });
  }
  const made = stack.simulator!.volumes().filter((v) => !before.has(v.id));
  // One volume per claim provisioned, none for the refusal.
  expect(made.length).toBe(CASES.filter((c) => !c.refused).length);
  return out;
}

describe.skipIf(withoutGo !== undefined)('drop-in: the matrix provisioned by volhook and by the EBS CSI driver, compared', () => {
  let volhook: Record<string, Outcome>;
  let ebsCsi: Record<string, Outcome>;

  beforeAll(async () => {
    if (withoutGo) return;
    const missing = missingBinaries(EBS_CSI_BIN);
    if (missing.length > 0) await build(readComponents().components);
    const v = await startRealStack();
    try {
      volhook = await runMatrix(v.stack);
    } finally {
      await v.stop();
    }
    const inputs = await realPlaneInputs((line) => console.log(line));
    const peer = await startPeerStack({ ports: { backend: 0, ec2: 0, kube: 0 }, ec2: { timeScale: 20 }, kube: inputs, binDir: EBS_CSI_BIN });
    try {
      expect(peer.stack.forwarder()).toBeUndefined();
      ebsCsi = await runMatrix(peer.stack);
    } finally {
      await peer.stop();
    }
  }, 1_500_000);


  it('-> every claim but the refusal Bound on both sides; the refusal Pending on both', () => {
    for (const c of CASES) {
      const phase = c.refused ? '"Pending"' : '"Bound"';
      expect([c.claim, volhook[c.claim]?.['claim.phase'], ebsCsi[c.claim]?.['claim.phase']]).toEqual([c.claim, phase, phase]);
    }
  });

  it('-> the differences found are exactly the rows of docs/parameters.md "Deliberate differences from the EBS CSI driver"', () => {
    const found = differences(volhook, ebsCsi);
    const key = (d: Difference) => `${d.claim} | ${d.field} | ${d.volhook} | ${d.ebsCsi}`;
    console.log(found.map(key).join('\n'));
    expect(found.map(key).sort()).toEqual(listedDifferences().map(key).sort());
  });
});

// Needs no Go: the comparison and the table it holds.
describe('drop-in comparison (pure)', () => {
  it('differences: a changed field and a field one side lacks are found; equal outcomes give none', () => {
    const a = { c: { 'volume.size': '4', 'tag x': '"1"' } };
    expect(differences(a, { c: { 'volume.size': '4', 'tag x': '"1"' } })).toEqual([]);
    expect(differences(a, { c: { 'volume.size': '5' } })).toEqual([
      { claim: 'c', field: 'tag x', volhook: '"1"', ebsCsi: '(absent)' },
      { claim: 'c', field: 'volume.size', volhook: '4', ebsCsi: '5' },
    ]);
  });

  it('docs/parameters.md\'s table -> rows of four cells naming claims of the matrix, each with a reason', () => {
    const rows = listedDifferences();
    expect(rows.length).toBeGreaterThan(0);
    const claims = new Set(CASES.map((c) => c.claim));
    for (const row of rows) expect(claims.has(row.claim), row.claim).toBe(true);
    const doc = readFileSync(new URL('../../docs/parameters.md', import.meta.url), 'utf8');
    const lines = doc.slice(doc.indexOf(SECTION)).split('\n').filter((l) => l.startsWith('| `'));
    expect(lines.length).toBe(rows.length);
    for (const line of lines) expect(line.split(' | ')[4]?.replace(/\|$/, '').trim().length ?? 0, line).toBeGreaterThan(20);
  });
});
