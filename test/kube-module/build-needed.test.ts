/**
 * When `VOLHOOK_KUBE=real npm start` builds the plane first (tools/kube/build.ts
 * kubeBuildNeeded): binaries missing, no stamp, a module or a Go other than the stamp's. No Go
 * is run here: the binaries are empty files in a temporary directory.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { kubeBinaries, kubeBuildNeeded, moduleHash, readStamp } from '../../tools/kube/build.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function binDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'volhook-kube-bin-'));
  dirs.push(dir);
  return dir;
}

function fakeBuild(dir: string): void {
  for (const path of Object.values(kubeBinaries(dir))) writeFileSync(path, '');
}

/** A stamp as a build writes it, with this Go and module hash. */
function stamp(dir: string, fields: { go: string; module: string }): void {
  writeFileSync(join(dir, 'versions.json'), JSON.stringify({ kubernetes: 'v1.36.3', etcd: 'v3.6.8', builtAt: '2026-12-06T12:00:00Z', ...fields }));
}

describe('kubeBuildNeeded', () => {
  it('no binaries -> "not built yet", naming them', () => {
    expect(kubeBuildNeeded('go1.26.8', binDir())).toMatch(/^not built yet \(no etcd, kube-apiserver, kube-controller-manager, kube-scheduler in /);
  });

  it('binaries but no stamp, or one of another module or Go -> why; the stamp of this module and Go -> nothing to do', () => {
    const dir = binDir();
    fakeBuild(dir);
    expect(kubeBuildNeeded('go1.26.8', dir)).toMatch(/no versions\.json/);
    stamp(dir, { go: 'go1.26.8', module: 'another' });
    expect(kubeBuildNeeded('go1.26.8', dir)).toMatch(/tools\/kube\/go\.mod or go\.sum changed since they were built \(v1\.36\.3, etcd v3\.6\.8\)/);
    stamp(dir, { go: 'go1.25.0', module: moduleHash() });
    expect(kubeBuildNeeded('go1.26.8', dir)).toBe('built with go1.25.0, the installed Go is go1.26.8');
    stamp(dir, { go: 'go1.26.8', module: moduleHash() });
    expect(readStamp(dir)?.kubernetes).toBe('v1.36.3');
    expect(kubeBuildNeeded('go1.26.8', dir)).toBeUndefined();
  });
});
