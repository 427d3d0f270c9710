/** The example manifests (infra/examples) agree with the code; the forwarder's chart is test/deploy/chart.test.ts's. */
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { StorageClassSchema } from '../../lib/contract/index.js';

type Doc = { kind: string; metadata: { name: string; namespace?: string }; [k: string]: unknown };

async function docs(dir: string): Promise<Doc[]> {
  const base = new URL(`../../infra/${dir}/`, import.meta.url);
  const files = (await readdir(base)).filter((f) => f.endsWith('.yaml'));
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
