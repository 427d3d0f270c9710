/** The objects a benchmark creates: claims of the default class, and one pod per claim. */
import type { KubeObject } from '../../lib/local/kube/index.js';

type NewObject = Omit<KubeObject, 'metadata'> & { metadata: Partial<KubeObject['metadata']> };

export const BENCH_NAMESPACE = 'default';

/** A ReadWriteOnce claim without a class: the default class (gp3, WaitForFirstConsumer) is filled in. */
export function claim(name: string, size = '4Gi'): NewObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: BENCH_NAMESPACE, labels: { app: 'volhook-bench' } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
  };
}

/**
 * A pod mounting `claimName`, pinned to `nodeName` by a nodeSelector on the hostname label, so
 * that a burst is spread over enough nodes (≤ 24 volumes each; EBS has 26 slots per node here).
 */
export function podFor(name: string, claimName: string, nodeName: string): NewObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: BENCH_NAMESPACE, labels: { app: 'volhook-bench' } },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': nodeName },
      containers: [{ name: 'app', image: 'public.ecr.aws/docker/library/busybox:1.36', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    },
  };
}
