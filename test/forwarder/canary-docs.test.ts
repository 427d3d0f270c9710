/**
 * docs/deploy.md, "A canary beside the EBS CSI controller", against the code: who serves what,
 * the names, values, finalizers, reason, log line and metric it states, and the IAM it leans on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { EBS_DRIVER, Finalizers, IN_TREE_EBS_PLUGIN, PROVISIONER_MISMATCH_CODE } from '../../lib/contract/index.js';
import { configFromEnv } from '../../lib/forwarder/config.js';
import { isOurAttachment, isOurClaim, isOurSnapshotContent, isOurVolume, type Ownership } from '../../lib/forwarder/filter.js';
import type { SnapshotContentObject } from '../../lib/forwarder/items.js';
import { createMetrics } from '../../lib/forwarder/metrics.js';
import { otherProvisioner } from '../../lib/reconcile/provision.js';
import { ClusterRegistrationSchema, servedProvisioner } from '../../lib/registry/index.js';
import { attachment, claim, volume } from './objects.js';

const file = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const section = file('docs/deploy.md').split('\n## A canary beside the EBS CSI controller\n')[1]?.split('\n## ')[0] ?? '';
const values = parse(file('charts/volhook-forwarder/values.yaml')) as Record<string, any>;
const CANARY = 'canary.volhook.io';
const canary: Ownership = { provisioner: CANARY, driver: EBS_DRIVER, canary: true };

describe('docs/deploy.md, "A canary beside the EBS CSI controller"', () => {
  it('is there, with who does what, why attach stays with the controller, how to run, widen and roll back', () => {
    for (const part of ['| attach and detach | none | every VolumeAttachment, both sides\' |', '**Why attach stays with the controller.**', 'How to run it:', '**Widen**', '**Roll back**']) {
      expect(section, part).toContain(part);
    }
  });

  it("the table's rows are what the forwarder takes as a canary", () => {
    expect(section).toContain("| provisioning: CreateVolume, the PV | claims of classes naming `canary.volhook.io` | claims of classes naming `ebs.csi.aws.com` |");
    expect(isOurClaim(claim('a', { provisioner: CANARY }), canary)).toBe(true);
    expect(isOurClaim(claim('b', { provisioner: EBS_DRIVER }), canary)).toBe(false);
    expect(section).toContain(`PVs it provisioned (\`${EBS_DRIVER}\`, \`${IN_TREE_EBS_PLUGIN}\`), static PVs`);
    expect(isOurVolume(volume('pvc-a', { provisionedBy: CANARY }), canary)).toBe(true);
    for (const pv of [volume('pvc-b', { provisionedBy: EBS_DRIVER }), volume('pvc-c', { provisionedBy: IN_TREE_EBS_PLUGIN }), volume('static')]) expect(isOurVolume(pv, canary)).toBe(false);
    expect(isOurAttachment(attachment('csi-1', 'pvc-a', 'n1'), canary)).toBe(false);
    const grown = claim('a', { provisioner: CANARY, volumeName: 'pvc-a' });
    grown.spec!.resources = { requests: { storage: '40Gi' } };
    expect(isOurClaim(grown, canary, () => volume('pvc-a', { provisionedBy: CANARY }))).toBe(false);
    const content = { metadata: { name: 'c' }, spec: { driver: EBS_DRIVER, deletionPolicy: 'Delete', source: { volumeHandle: 'vol-1' }, volumeSnapshotRef: { name: 's', namespace: 'n' } } } as SnapshotContentObject;
    expect(isOurSnapshotContent(content, canary)).toBe(false);
  });

  it('the finalizers it names are the sidecars\' names the code uses', () => {
    expect(section).toContain(`\`${Finalizers.attacher(EBS_DRIVER)}\``);
    expect(section).toContain(`\`${Finalizers.provisioner}\``);
  });

  it('the IAM it leans on: the managed policy attaches any volume; volhook\'s role only its own', () => {
    expect(section).toContain('`AmazonEBSCSIDriverPolicy` allows\n(`ec2:AttachVolume` and `ec2:DetachVolume` on any volume)');
    const managed = JSON.parse(file('infra/iam/aws-managed/AmazonEBSCSIDriverPolicy.json')) as { document: { Statement: { Effect: string; Action: string | string[]; Resource: string | string[]; Condition?: unknown }[] } };
    const attach = managed.document.Statement.filter((s) => [s.Action].flat().includes('ec2:AttachVolume'));
    expect(attach.some((s) => s.Effect === 'Allow' && s.Condition === undefined && [s.Resource].flat().includes('arn:aws:ec2:*:*:volume/*'))).toBe(true);
    const ours = JSON.parse(JSON.parse(file('infra/iam/ec2-role-policy.json')).template) as { Statement: { Sid: string; Action: string | string[]; Resource: string; Condition?: { StringEquals?: Record<string, string> } }[] };
    const mutate = ours.Statement.filter((s) => [s.Action].flat().includes('ec2:AttachVolume') && s.Resource.includes(':volume/'));
    expect(mutate.length).toBeGreaterThan(0);
    for (const s of mutate) expect(Object.keys(s.Condition?.StringEquals ?? {})).toContain('aws:ResourceTag/volhook.io/cluster');
  });

  it('the registration, chart values and start-up refusal it states', () => {
    expect(section).toContain('`"provisioner": "canary.volhook.io"`');
    expect(servedProvisioner(ClusterRegistrationSchema.parse({ clusterId: 'c1', secrets: ['canary-docs-secret-0123456789'], region: 'us-east-1', provisioner: CANARY }))).toBe(CANARY);
    expect(servedProvisioner(ClusterRegistrationSchema.parse({ clusterId: 'c1', secrets: ['canary-docs-secret-0123456789'], region: 'us-east-1' }))).toBe(EBS_DRIVER);
    expect(section).toContain('`--set provisioner=canary.volhook.io --set canary=true`');
    expect(section).toContain('`--set csiDriver.create=false`');
    expect(values).toMatchObject({ provisioner: EBS_DRIVER, canary: false, csiDriver: { create: expect.any(Boolean) } });
    const env = { VOLHOOK_API_URL: 'http://b.invalid', VOLHOOK_CLUSTER_ID: 'c1', VOLHOOK_SECRET: 'canary-docs-secret-0123456789', VOLHOOK_CANARY: 'true' };
    expect(() => configFromEnv(env)).toThrow(/VOLHOOK_PROVISIONER must differ/);
    expect(configFromEnv({ ...env, VOLHOOK_PROVISIONER: CANARY }).canary).toBe(true);
  });

  it('a claim of another provisioner: failed OtherProvisioner naming both, nothing written; the log line and metric it names exist', () => {
    const pvc = claim('x', { provisioner: EBS_DRIVER }) as unknown as Parameters<typeof otherProvisioner>[0];
    const settled = otherProvisioner(pvc, { provisionerName: CANARY, clusterId: 'c1' });
    expect(settled.writes).toEqual([]);
    expect(settled.verdict).toMatchObject({ outcome: 'failed', reason: 'OtherProvisioner' });
    expect(settled.verdict.outcome === 'failed' && settled.verdict.message).toMatch(new RegExp(`"${EBS_DRIVER}".*"${CANARY}"`));
    expect(section).toContain('reason `OtherProvisioner`');
    expect(section).toContain(`403 \`${PROVISIONER_MISMATCH_CODE}\``);
    expect(file('lib/app/app.ts')).toMatch(/new ApiError\(\s*403,\s*PROVISIONER_MISMATCH_CODE/);
    expect(file('lib/forwarder/sender.ts')).toContain("logger.warn('reconcile failed'");
    expect(section).toContain('`volhook_forwarder_outcomes_total{outcome="failed"}`');
    expect(createMetrics({ queueDepth: () => 0, defaultMetrics: false }).registry.getSingleMetric('volhook_forwarder_outcomes_total')).toBeDefined();
  });

  it('the test it names exists and checks what it says', () => {
    expect(section).toContain('`test/e2e/canary.test.ts`');
    expect(existsSync(new URL('../../test/e2e/canary.test.ts', import.meta.url))).toBe(true);
    const test = file('test/e2e/canary.test.ts');
    for (const piece of ["actions.AttachVolume?.calls ?? 0).toBe(0)", "k.startsWith('VolumeAttachment/')", 'peer.reclaimed).toEqual(new Set([controllerPv]))', "canary: true"]) expect(test, piece).toContain(piece);
  });
});
