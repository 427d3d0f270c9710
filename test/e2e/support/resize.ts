/**
 * Helpers of the resize and VolumeAttributesClass scenarios: the claim's Events in the order
 * they were recorded, the manifests (kubectl itself: ./kubectl.ts).
 */
import type { CoreV1Event, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { eventsFor, readClaim, type E2eKube } from './kube.js';
import { waitFor } from './wait.js';

/** A claim's Events, in the order they were recorded (the store's resourceVersion). */
export async function claimEvents(kube: E2eKube, namespace: string, name: string): Promise<CoreV1Event[]> {
  const events = await eventsFor(kube, namespace, 'PersistentVolumeClaim', name);
  return events.sort((a, b) => Number(a.metadata?.resourceVersion ?? 0) - Number(b.metadata?.resourceVersion ?? 0));
}

export const reasons = (events: CoreV1Event[]) => events.map((e) => e.reason ?? '');

/** Waits until the claim satisfies `until`; the failure message shows its status. */
export function waitClaim(kube: E2eKube, namespace: string, name: string, what: string, until: (pvc: V1PersistentVolumeClaim) => boolean, timeoutMs = 90_000) {
  return waitFor(() => readClaim(kube, namespace, name), until, {
    what: `claim ${namespace}/${name}: ${what}`,
    timeoutMs,
    report: (pvc) => ({ spec: pvc?.spec, status: pvc?.status }),
  });
}

/** Waits for an Event of `reason` on the claim and returns it. */
export async function waitEvent(kube: E2eKube, namespace: string, name: string, reason: string, timeoutMs = 60_000): Promise<CoreV1Event> {
  const events = await waitFor(() => claimEvents(kube, namespace, name), (list) => list.some((e) => e.reason === reason), {
    what: `Event ${reason} on claim ${namespace}/${name}`,
    timeoutMs,
    report: (list) => list.map((e) => `${e.type} ${e.reason}: ${e.message}`),
  });
  return events.find((e) => e.reason === reason) as CoreV1Event;
}

export const claimYaml = (ns: string, name: string, fields: { storageClassName: string; size: string; volumeMode?: 'Block'; vac?: string; volumeName?: string; annotations?: Record<string, string> }) => `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ${name}
  namespace: ${ns}
${fields.annotations ? `  annotations:\n${Object.entries(fields.annotations).map(([k, v]) => `    ${k}: "${v}"`).join('\n')}\n` : ''}spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ${fields.storageClassName}
${fields.volumeMode ? `  volumeMode: ${fields.volumeMode}\n` : ''}${fields.vac ? `  volumeAttributesClassName: ${fields.vac}\n` : ''}${fields.volumeName ? `  volumeName: ${fields.volumeName}\n` : ''}  resources:
    requests:
      storage: ${fields.size}
`;


export const vacYaml = (name: string, parameters: Record<string, string>, driverName = 'ebs.csi.aws.com') => `apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata:
  name: ${name}
driverName: ${driverName}
parameters:
${Object.entries(parameters).map(([k, v]) => `  ${k}: "${v}"`).join('\n')}
`;

export const classYaml = (name: string, fields: { type?: string; binding?: 'Immediate' | 'WaitForFirstConsumer'; expand?: boolean }) => `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ${name}
provisioner: ebs.csi.aws.com
parameters:
  type: ${fields.type ?? 'gp3'}
reclaimPolicy: Delete
volumeBindingMode: ${fields.binding ?? 'Immediate'}
${fields.expand ? 'allowVolumeExpansion: true\n' : ''}`;
