/**
 * What the real control plane needs from this repository before it starts (lib/local/plane):
 * the binaries, built first when missing or stale (saying so), the VolumeSnapshot CRDs' folder
 * in the Go module cache, and the forwarder chart's render for its ServiceAccount and roles.
 * For `VOLHOOK_KUBE=real npm start` and the real-plane tests.
 */
import { renderChart } from '../../infra/tools/chart.js';
import type { KubeManifest } from '../../lib/local/plane/cluster.js';
import type { ControlPlaneBinaries } from '../../lib/local/plane/control-plane.js';
import { buildKube, goVersion, kubeBinaries, kubeBuildNeeded } from './build.js';
import { snapshotCrdDir } from './crds.js';

export interface RealPlaneInputs {
  binaries: ControlPlaneBinaries;
  snapshotCrdDir: string;
  forwarderChart: KubeManifest[];
}

export async function realPlaneInputs(say: (line: string) => void = (line) => console.log(line)): Promise<RealPlaneInputs> {
  const go = goVersion();
  if (!go) throw new Error('the real control plane (VOLHOOK_KUBE=real) is built from tools/kube with Go, and there is no `go` on the PATH');
  const stale = kubeBuildNeeded(go);
  if (stale) {
    say(`The real control plane is ${stale.startsWith('not built') ? 'not built yet' : `stale: ${stale}`}; building it first (npm run kube:build).`);
    await buildKube({ say });
  }
  return { binaries: kubeBinaries(), snapshotCrdDir: snapshotCrdDir(), forwarderChart: renderChart() as KubeManifest[] };
}
