/**
 * What the e2e suite's real plane is started with: the control plane's inputs (tools/kube:
 * binaries built first if missing or stale, the snapshot CRDs, the forwarder chart) and
 * external-snapshotter's snapshot-controller — its binary from tools/ebs-csi (built first if
 * missing: `npm run ebs-csi:build -- build snapshot-controller`), its RBAC file from the same
 * module at the same version, read where `go mod download` keeps it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import * as z from 'zod';
import { build, EBS_CSI_BIN, readComponents } from '../../../infra/tools/ebs-csi-build.js';
import type { KubeManifest } from '../../../lib/local/plane/cluster.js';
import type { SnapshotControllerOptions } from '../../../lib/local/plane/snapshot-controller.js';
import { goEnv } from '../../../tools/kube/bump.js';
import { realPlaneInputs, type RealPlaneInputs } from '../../../tools/kube/inputs.js';

const SNAPSHOT_CONTROLLER = 'snapshot-controller';
const RBAC_FILE = 'deploy/kubernetes/snapshot-controller/rbac-snapshot-controller.yaml';

export async function snapshotControllerInputs(say: (line: string) => void): Promise<SnapshotControllerOptions> {
  const component = readComponents().components.find((c) => c.name === SNAPSHOT_CONTROLLER);
  if (!component) throw new Error(`tools/ebs-csi/components.json names no ${SNAPSHOT_CONTROLLER}`);
  const binary = join(EBS_CSI_BIN, 'snapshot-controller');
  if (!existsSync(binary)) {
    say(`snapshot-controller is not built yet; building it first (npm run ebs-csi:build -- build ${SNAPSHOT_CONTROLLER}).`);
    await build([component]);
  }
  const out = execFileSync('go', ['mod', 'download', '-json', `${component.module}@${component.version}`], { cwd: tmpdir(), encoding: 'utf8', env: goEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const { Dir } = z.object({ Dir: z.string().min(1) }).parse(JSON.parse(out));
  const rbac = parseAllDocuments(await readFile(join(Dir, RBAC_FILE), 'utf8'))
    .map((doc) => doc.toJS() as KubeManifest | null)
    .filter((m): m is KubeManifest => m !== null);
  return { binary, rbac };
}

export async function e2eRealPlaneInputs(say: (line: string) => void = (line) => console.log(line)): Promise<RealPlaneInputs & { snapshotController: SnapshotControllerOptions }> {
  return { ...(await realPlaneInputs(say)), snapshotController: await snapshotControllerInputs(say) };
}
