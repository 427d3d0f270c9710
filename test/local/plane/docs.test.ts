/** docs/real-plane.md says what the code does: its controllers, versions and node registration are checked against the code. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTROLLERS } from '../../../lib/local/plane/control-plane.js';
import { registeredCsiNode, registeredNode } from '../../../lib/local/plane/node-agent.js';
import { moduleVersions, SNAPSHOT_CRDS } from '../../../tools/kube/go-mod.js';

const doc = readFileSync(new URL('../../../docs/real-plane.md', import.meta.url), 'utf8');
const goMod = readFileSync(new URL('../../../tools/kube/go.mod', import.meta.url), 'utf8');

describe('docs/real-plane.md', () => {
  it("-> the controllers kube-controller-manager runs, exactly (lib/local/plane/control-plane.ts's CONTROLLERS)", () => {
    const named = [...doc.matchAll(/`([a-z-]+-controller)`/g)].map((m) => m[1]);
    expect(new Set(named)).toEqual(new Set(CONTROLLERS));
  });

  it('-> the versions tools/kube/go.mod requires, and the snapshot CRDs module version', () => {
    const { kubernetes, etcd } = moduleVersions(goMod);
    expect(doc).toContain(`**${kubernetes}**`);
    expect(doc).toContain(`**${etcd}**`);
    expect(doc).toContain(`\`${SNAPSHOT_CRDS.module}\` **${SNAPSHOT_CRDS.version}**`);
  });

  it("-> the node agent's labels, annotation and CSINode topology keys", () => {
    const node = { name: 'ip-10-0-1-10.ec2.internal', zone: 'us-east-1a', zoneId: 'use1-az1', instanceId: 'i-1' };
    const registered = registeredNode(node, 'us-east-1');
    for (const key of Object.keys(registered.metadata.annotations)) expect(doc).toContain(`\`${key}: "true"\``);
    for (const label of ['kubernetes.io/hostname', 'kubernetes.io/os', 'topology.kubernetes.io/zone', 'topology.ebs.csi.aws.com/zone', 'topology.k8s.aws/zone-id']) {
      expect(Object.keys(registered.metadata.labels)).toContain(label);
      expect(doc).toContain(`\`${label}\``);
    }
    const [driver] = registeredCsiNode(node, 'ebs.csi.aws.com', 'uid').spec.drivers;
    expect(doc.replace(/\s+/g, ' ')).toContain(`topology keys ${driver!.topologyKeys.map((k) => `\`${k}\``).join(', ')}`);
    expect(doc).toContain(`${driver!.allocatable.count} attachable volumes`);
  });
});
