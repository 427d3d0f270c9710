/**
 * tools/kube's go.mod and the generator of its replaces (tools/kube/go-mod.ts): pure, so no Go
 * is needed here; `npm run kube:bump` runs the same functions over the release's real go.mod.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bumpedGoMod, kubeLdflags, moduleVersions, replacedModules, stagingReplaces, stagingVersion } from '../../tools/kube/go-mod.js';

const RELEASE_GO_MOD = `module k8s.io/kubernetes

go 1.26.0

require (
	go.etcd.io/etcd/server/v3 v3.6.9
	k8s.io/api v0.0.0
)

require (
	go.etcd.io/etcd/client/v3 v3.6.9 // indirect
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	k8s.io/kube-openapi => k8s.io/kube-openapi v0.0.0-20250101
)
`;

const toolsGoMod = readFileSync(new URL('../../tools/kube/go.mod', import.meta.url), 'utf8');

describe('the replaces of a Kubernetes release', () => {
  it('each ./staging replace of its go.mod -> the published module at v0.MINOR.PATCH; other replaces are not copied', () => {
    expect(stagingReplaces(RELEASE_GO_MOD, 'v1.36.4')).toEqual([
      { module: 'k8s.io/api', version: 'v0.36.4' },
      { module: 'k8s.io/client-go', version: 'v0.36.4' },
    ]);
  });

  it('a go.mod with no staging replaces, or a version that is not a release -> refused, named', () => {
    expect(() => stagingReplaces('module x\n', 'v1.36.4')).toThrow(/no \.\/staging replaces/);
    expect(() => stagingVersion('v1.36')).toThrow(/"v1\.36"/);
    expect(() => stagingVersion('v2.0.0')).toThrow(/not a Kubernetes release/);
    expect(stagingVersion('v1.37.2')).toBe('v0.37.2');
  });

  it("a bump -> the release and its etcd required, the replace block the release's staging replaces and nothing else", () => {
    const current = [
      'module volhook/tools/kube',
      '',
      'go 1.26.0',
      '',
      'require (',
      '\tgo.etcd.io/etcd/server/v3 v3.6.8',
      '\tk8s.io/kubernetes v1.36.3',
      ')',
      '',
      'require github.com/x/y v1.0.0 // indirect',
      '',
      'replace (',
      '\tk8s.io/api => k8s.io/api v0.36.3',
      '\tk8s.io/gone => k8s.io/gone v0.36.3',
      ')',
      '',
      'replace k8s.io/single => k8s.io/single v0.36.3',
      '',
    ].join('\n');
    expect(bumpedGoMod(current, RELEASE_GO_MOD, 'v1.36.4')).toBe(
      [
        'module volhook/tools/kube',
        '',
        'go 1.26.0',
        '',
        'require (',
        '\tgo.etcd.io/etcd/server/v3 v3.6.9',
        '\tk8s.io/kubernetes v1.36.4',
        ')',
        '',
        'require github.com/x/y v1.0.0 // indirect',
        '',
        'replace (',
        '\tk8s.io/api => k8s.io/api v0.36.4',
        '\tk8s.io/client-go => k8s.io/client-go v0.36.4',
        ')',
        '',
      ].join('\n'),
    );
    expect(() => bumpedGoMod(current, RELEASE_GO_MOD.replace(/go\.etcd\.io\/etcd\/server\/v3 v3\.6\.9\n/, ''), 'v1.36.4')).toThrow(/requires no go\.etcd\.io\/etcd\/server\/v3/);
    expect(() => bumpedGoMod('module x\n', RELEASE_GO_MOD, 'v1.36.4')).toThrow(/requires no k8s\.io\/kubernetes/);
  });

  it('tools/kube/go.mod regenerated for the release it requires -> itself (what `npm run kube:bump` with no version checks)', () => {
    const version = moduleVersions(toolsGoMod).kubernetes;
    const release = `require go.etcd.io/etcd/server/v3 ${moduleVersions(toolsGoMod).etcd}\n\nreplace (\n${replacedModules(toolsGoMod)
      .map((m) => `\t${m} => ./staging/src/${m}`)
      .join('\n')}\n)\n`;
    expect(bumpedGoMod(toolsGoMod, release, version)).toBe(toolsGoMod);
  });
});

describe('tools/kube/go.mod', () => {
  it('-> one Kubernetes release and its etcd required, every staging module replaced at that release', () => {
    const versions = moduleVersions(toolsGoMod);
    expect(versions.kubernetes).toMatch(/^v1\.36\.\d+$/);
    expect(versions.etcd).toMatch(/^v3\.\d+\.\d+$/);
    const replaced = replacedModules(toolsGoMod);
    expect(replaced.length).toBeGreaterThan(30);
    const lines = [...toolsGoMod.matchAll(/^\s*(\S+) => (\S+) (v\S+)$/gm)].map((m) => ({ module: m[1], target: m[2], version: m[3] }));
    expect(lines.map((l) => l.module).sort()).toEqual([...replaced].sort());
    for (const line of lines) expect(line, line.module).toEqual({ module: line.module, target: line.module, version: stagingVersion(versions.kubernetes) });
    expect(replaced.every((m) => m.startsWith('k8s.io/'))).toBe(true);
  });

  it('the link flags -> stripped, the version stamped as a release build stamps it', () => {
    const flags = kubeLdflags('v1.36.3');
    expect(flags).toContain('-s -w');
    expect(flags).toContain('-X k8s.io/component-base/version.gitVersion=v1.36.3');
    expect(flags).toContain('gitMajor=1');
    expect(flags).toContain('gitMinor=36');
  });
});
