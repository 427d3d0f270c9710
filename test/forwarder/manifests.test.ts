/** The cluster-side manifests (infra/forwarder, infra/examples) agree with the code. */
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { StorageClassSchema } from '../../lib/contract/index.js';
import { ENV_VARS, configFromEnv, parseConfig } from '../../lib/forwarder/config.js';

type Doc = { kind: string; metadata: { name: string; namespace?: string }; [k: string]: unknown };

async function docs(dir: string): Promise<Doc[]> {
  const base = new URL(`../../infra/${dir}/`, import.meta.url);
  const files = (await readdir(base)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
  const all: Doc[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(new URL(file, base), 'utf8'))) {
      expect(doc.errors).toEqual([]);
      all.push(doc.toJS() as Doc);
    }
  }
  return all;
}

const find = (all: Doc[], kind: string) => all.find((d) => d.kind === kind) as any;

describe('infra/forwarder', () => {
  it('kustomization -> lists every manifest in the folder, namespace volhook-system', async () => {
    const base = new URL('../../infra/forwarder/', import.meta.url);
    const kustomization = parseAllDocuments(await readFile(new URL('kustomization.yaml', base), 'utf8'))[0]!.toJS() as { namespace: string; resources: string[] };
    const files = (await readdir(base)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    expect(kustomization.namespace).toBe('volhook-system');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
  });

  it('Deployment -> two replicas, rolling update that never drops below two, probes, small resources, locked-down container, secret as a file', async () => {
    const deployment = find(await docs('forwarder'), 'Deployment');
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    const pod = deployment.spec.template.spec;
    expect(pod).toMatchObject({
      serviceAccountName: 'volhook-forwarder',
      automountServiceAccountToken: true,
      securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
    });
    const container = pod.containers[0];
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 65532,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.resources).toEqual({ requests: { cpu: '50m', memory: '144Mi' }, limits: { cpu: '200m', memory: '256Mi' } });
    const secretFile = container.env.find((e: { name: string }) => e.name === 'VOLHOOK_SECRET_FILE').value as string;
    const mount = container.volumeMounts.find((m: { mountPath: string }) => secretFile.startsWith(`${m.mountPath}/`));
    expect(pod.volumes.find((v: { name: string }) => v.name === mount.name).secret.secretName).toBe('volhook-forwarder');
    expect(secretFile.endsWith('/secret')).toBe(true);
  });

  it('Deployment -> leader election on, the Lease in the pod\'s namespace, replicas spread across nodes', async () => {
    const deployment = find(await docs('forwarder'), 'Deployment');
    const pod = deployment.spec.template.spec;
    const env = pod.containers[0].env as { name: string; value?: string; valueFrom?: unknown }[];
    expect(env.find((e) => e.name === 'VOLHOOK_LEADER_ELECT')?.value).toBe('true');
    expect(env.find((e) => e.name === 'VOLHOOK_LEASE_NAMESPACE')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
    const labels = deployment.spec.selector.matchLabels;
    expect(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution).toEqual([
      { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: labels } } },
    ]);
    // The drain before the release fits in the grace period.
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(parseConfig({ apiUrl: 'https://x', clusterId: 'c', secret: 'manifest-test-secret-0123456789' }).shutdownTimeoutMs);
  });

  it('PodDisruptionBudget -> at least one forwarder through voluntary disruptions, selecting the Deployment\'s pods', async () => {
    const all = await docs('forwarder');
    const pdb = find(all, 'PodDisruptionBudget');
    expect(pdb.apiVersion).toBe('policy/v1');
    expect(pdb.spec).toEqual({ minAvailable: 1, selector: { matchLabels: find(all, 'Deployment').spec.selector.matchLabels } });
  });

  it('ConfigMap -> only known variables, and together with the Deployment a valid configuration once its cluster id placeholder is replaced (left, it is refused)', async () => {
    const all = await docs('forwarder');
    const data = find(all, 'ConfigMap').data as Record<string, string>;
    const known = new Set<string>(Object.values(ENV_VARS));
    expect(Object.keys(data).filter((k) => !known.has(k))).toEqual([]);
    const secret = find(all, 'Secret');
    expect(Object.keys(secret.stringData)).toEqual(['secret']);
    const env = Object.fromEntries(
      (find(all, 'Deployment').spec.template.spec.containers[0].env as { name: string; value?: string }[]).map((e) => [e.name, e.value ?? 'volhook-system']),
    );
    // The cluster id is a placeholder to replace (docs/deploy.md): left as it is, the forwarder
    // refuses to start, naming the variable; replaced with an id the registry accepts, it starts.
    expect(data.VOLHOOK_CLUSTER_ID).toMatch(/^REPLACE/);
    expect(() => configFromEnv({ ...data, ...env })).toThrow(/VOLHOOK_CLUSTER_ID/);
    expect(configFromEnv({ ...data, ...env, VOLHOOK_CLUSTER_ID: 'prod-1' })).toMatchObject({ leaderElect: true, leaseNamespace: 'volhook-system', leaseName: 'volhook-forwarder' });
  });

  it('CSIDriver ebs.csi.aws.com -> attachRequired, no podInfoOnMount, fsGroupPolicy File', async () => {
    expect(find(await docs('forwarder'), 'CSIDriver')).toMatchObject({
      metadata: { name: 'ebs.csi.aws.com' },
      spec: { attachRequired: true, podInfoOnMount: false, fsGroupPolicy: 'File' },
    });
  });
});

describe('infra/examples', () => {
  it('StorageClasses -> gp3 default WFFC Delete, gp3-retain Retain, io2 Immediate with iops; all valid for the contract', async () => {
    const classes = (await docs('examples')).filter((d) => d.kind === 'StorageClass');
    for (const sc of classes) expect(StorageClassSchema.safeParse(sc).success).toBe(true);
    const byName = Object.fromEntries(classes.map((sc) => [sc.metadata.name, sc as any]));
    expect(byName.gp3).toMatchObject({ volumeBindingMode: 'WaitForFirstConsumer', reclaimPolicy: 'Delete', metadata: { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } });
    expect(byName['gp3-retain']).toMatchObject({ reclaimPolicy: 'Retain' });
    expect(byName.io2).toMatchObject({ volumeBindingMode: 'Immediate', parameters: { type: 'io2', iops: '10000' } });
  });

  it('examples -> a PVC, a pod using it, a static PV naming the driver', async () => {
    const all = await docs('examples');
    const pod = find(all, 'Pod');
    const claims = all.filter((d) => d.kind === 'PersistentVolumeClaim').map((d) => d.metadata.name);
    expect(claims).toContain(pod.spec.volumes[0].persistentVolumeClaim.claimName);
    expect(find(all, 'PersistentVolume').spec.csi.driver).toBe('ebs.csi.aws.com');
  });
});
