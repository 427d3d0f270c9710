/**
 * The local stack's options the real control plane does not implement are refused, named,
 * before anything starts; the control: the same options without them get past the check (and
 * here stop at the missing binaries, so no Go is needed).
 */
import { describe, expect, it } from 'vitest';
import { startLocalStack } from '../../../lib/local/stack/index.js';

const missing = { etcd: '/nonexistent/etcd', apiserver: '/nonexistent/kube-apiserver', controllerManager: '/nonexistent/kcm', scheduler: '/nonexistent/kube-scheduler' };
const kube = { binaries: missing, snapshotCrdDir: '/nonexistent', forwarderChart: [] };
const ports = { backend: 0, ec2: 0, kube: 0 };

describe('startLocalStack on the real control plane', () => {
  it('writeBack direct, or options for the simulated controllers -> refused, named', async () => {
    await expect(startLocalStack({ ports, kube, writeBack: 'direct' })).rejects.toThrow(/writeBack "direct" is not implemented on the real control plane/);
    await expect(startLocalStack({ ports, kube, controllers: { provisioner: 'ebs.csi.aws.com' } })).rejects.toThrow(/controllers: options of the simulated API's controllers/);
  });

  it('control: neither -> past the check, to the plane itself (here: no etcd binary)', async () => {
    await expect(startLocalStack({ ports, kube, forwarder: false })).rejects.toThrow(/no etcd binary at \/nonexistent\/etcd: run npm run kube:build/);
  });
});
