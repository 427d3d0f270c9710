/**
 * The VolumeSnapshot CRDs, read where Go keeps external-snapshotter's client module (its
 * `config/crd/`), at the version go-mod.ts pins: `go mod download` fetches it once into the
 * module cache and says where it is. No copy is kept in this repository.
 */
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { goEnv } from './bump.js';
import { SNAPSHOT_CRDS } from './go-mod.js';

export function snapshotCrdDir(): string {
  const out = execFileSync('go', ['mod', 'download', '-json', `${SNAPSHOT_CRDS.module}@${SNAPSHOT_CRDS.version}`], {
    // Outside any module: the download touches no go.mod.
    cwd: tmpdir(),
    encoding: 'utf8',
    env: goEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { Dir } = z.object({ Dir: z.string().min(1) }).parse(JSON.parse(out));
  return join(Dir, SNAPSHOT_CRDS.dir);
}
