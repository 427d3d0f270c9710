/**
 * A canary beside the EBS CSI controller: the forwarder offers only claims of its own
 * provisioner name not yet bound, and the PVs it wrote; every VolumeAttachment, snapshot content,
 * resize and PV of the driver they share stays the controller's. Each refusal has its control:
 * the same object is ours without `canary`.
 */
import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../lib/forwarder/config.js';
import { isOurAttachment, isOurClaim, isOurSnapshotContent, isOurVolume, type Ownership } from '../../lib/forwarder/filter.js';
import type { SnapshotContentObject } from '../../lib/forwarder/items.js';
import { attachment, claim, volume } from './objects.js';

const CANARY = 'canary.volhook.io';
const EBS = 'ebs.csi.aws.com';
const canary: Ownership = { provisioner: CANARY, driver: EBS, canary: true };
const whole: Ownership = { provisioner: CANARY, driver: EBS };

describe('which objects a canary takes', () => {
  it('a claim of its provisioner, not yet bound -> ours; one of ebs.csi.aws.com -> not', () => {
    expect(isOurClaim(claim('a', { provisioner: CANARY }), canary)).toBe(true);
    expect(isOurClaim(claim('b', { provisioner: EBS }), canary)).toBe(false);
  });

  it('its claim bound and asking to grow -> not ours (the external-resizer serves every PV of the driver); ours without canary', () => {
    const grown = claim('a', { provisioner: CANARY, volumeName: 'pvc-a' });
    grown.spec!.resources = { requests: { storage: '40Gi' } };
    grown.status = { phase: 'Bound' };
    const pvOf = () => volume('pvc-a', { provisionedBy: CANARY });
    expect(isOurClaim(grown, whole, pvOf)).toBe(true);
    expect(isOurClaim(grown, canary, pvOf)).toBe(false);
  });

  it('a PV it wrote -> ours; one of ebs.csi.aws.com, or a static one naming the driver -> not (ours without canary)', () => {
    expect(isOurVolume(volume('pvc-a', { provisionedBy: CANARY }), canary)).toBe(true);
    const controllers = volume('pvc-b', { provisionedBy: EBS });
    const statik = volume('static-c');
    expect(isOurVolume(controllers, canary)).toBe(false);
    expect(isOurVolume(statik, canary)).toBe(false);
    expect(isOurVolume(controllers, whole)).toBe(true); // it names our driver: attached by us
    expect(isOurVolume(statik, whole)).toBe(true);
  });

  it('every VolumeAttachment of the driver -> not ours, its PV volhook\'s or not (ours without canary)', () => {
    const va = attachment('csi-1', 'pvc-a', 'node-1');
    expect(isOurAttachment(va, canary)).toBe(false);
    expect(isOurAttachment(va, whole)).toBe(true);
  });

  it('a snapshot content of the driver -> not ours (ours without canary)', () => {
    const content = { metadata: { name: 'snapcontent-1' }, spec: { driver: EBS, deletionPolicy: 'Delete', source: { volumeHandle: 'vol-1' }, volumeSnapshotRef: { name: 's', namespace: 'ns' } } } as SnapshotContentObject;
    expect(isOurSnapshotContent(content, canary)).toBe(false);
    expect(isOurSnapshotContent(content, whole)).toBe(true);
  });
});

describe('the canary setting', () => {
  const base = { VOLHOOK_API_URL: 'http://backend.invalid', VOLHOOK_CLUSTER_ID: 'c1', VOLHOOK_SECRET: 'canary-test-secret-0123456789' };

  it('VOLHOOK_CANARY=true with a provisioner of its own -> on', () => {
    expect(configFromEnv({ ...base, VOLHOOK_CANARY: 'true', VOLHOOK_PROVISIONER: CANARY })).toMatchObject({ canary: true, provisioner: CANARY, driver: EBS });
    expect(configFromEnv(base).canary).toBe(false);
  });

  it("VOLHOOK_CANARY=true with the controller's provisioner name -> refused, naming both variables", () => {
    expect(() => configFromEnv({ ...base, VOLHOOK_CANARY: 'true' })).toThrow(/VOLHOOK_PROVISIONER must differ from the EBS CSI controller's \(VOLHOOK_DRIVER\)[\s\S]*at VOLHOOK_CANARY/);
  });
});
