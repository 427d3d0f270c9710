/**
 * The generator of the EBS CSI components' consumer modules (infra/tools/ebs-csi-build.ts):
 * replace lines read from the component's own go.mod, single-line and in blocks; a relative
 * replace is dropped only for a module required at the component's version, else refused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { consumerGoMod, EBS_CSI_DIR, parseReplaces, readComponents, type Component } from '../../infra/tools/ebs-csi-build.js';

const SNAPSHOTTER_LIKE = `module github.com/example/snapshotter/v8

go 1.26.0

require (
	github.com/example/snapshotter/client/v8 v8.6.0
	k8s.io/api v0.36.1
)

replace github.com/example/snapshotter/client/v8 => ./client

replace k8s.io/api => k8s.io/api v0.36.1 // pinned

replace (
	k8s.io/kms => k8s.io/kms v0.36.1
	github.com/old/thing v1.0.0 => github.com/new/thing v1.2.0
)
`;

const component: Component = {
  name: 'external-snapshotter',
  module: 'github.com/example/snapshotter/v8',
  version: 'v8.6.0',
  binaries: [{ name: 'csi-snapshotter', package: 'github.com/example/snapshotter/v8/cmd/csi-snapshotter' }],
  versionVariables: ['main.version'],
  sameVersionModules: ['github.com/example/snapshotter/client/v8'],
};

describe('ebs-csi-build: consumer go.mod from the component’s', () => {
  it('reads every replace, single-line and in a block, with versions on either side', () => {
    expect(parseReplaces(SNAPSHOTTER_LIKE)).toEqual([
      { from: 'github.com/example/snapshotter/client/v8', fromVersion: undefined, to: './client', toVersion: undefined },
      { from: 'k8s.io/api', fromVersion: undefined, to: 'k8s.io/api', toVersion: 'v0.36.1' },
      { from: 'k8s.io/kms', fromVersion: undefined, to: 'k8s.io/kms', toVersion: 'v0.36.1' },
      { from: 'github.com/old/thing', fromVersion: 'v1.0.0', to: 'github.com/new/thing', toVersion: 'v1.2.0' },
    ]);
  });

  it('drops the relative replace and requires that module at the component’s version; keeps the others; a tool line per binary; the component’s go directive', () => {
    const mod = consumerGoMod(component, SNAPSHOTTER_LIKE);
    expect(mod).toContain('module volhook.local/tools/ebs-csi/external-snapshotter');
    expect(mod).toContain('\ngo 1.26.0\n');
    expect(mod).toContain('\tgithub.com/example/snapshotter/v8 v8.6.0\n\tgithub.com/example/snapshotter/client/v8 v8.6.0\n');
    expect(mod).toContain('tool github.com/example/snapshotter/v8/cmd/csi-snapshotter');
    expect(mod).toContain('\tk8s.io/api => k8s.io/api v0.36.1\n');
    expect(mod).toContain('\tgithub.com/old/thing v1.0.0 => github.com/new/thing v1.2.0\n');
    expect(mod).not.toContain('./client');
  });

  it('control: a relative replace of a module not named in sameVersionModules is refused, naming it', () => {
    const { sameVersionModules: _, ...without } = component;
    expect(() => consumerGoMod(without, SNAPSHOTTER_LIKE)).toThrow(/replaces github\.com\/example\/snapshotter\/client\/v8 => \.\/client relatively/);
  });

  it('each committed module is the generator’s output for its component (its require of the component at the table’s version, its replaces, its tools)', () => {
    for (const c of readComponents().components) {
      const mod = readFileSync(join(EBS_CSI_DIR, c.name, 'go.mod'), 'utf8');
      expect(mod, c.name).toContain(`from ${c.module}@${c.version}'s go.mod`);
      expect(mod, c.name).toMatch(new RegExp(`\\t${c.module.replace(/[.]/g, '\\.')} ${c.version}\\b`));
      for (const b of c.binaries) expect(mod, c.name).toContain(`tool ${b.package}\n`);
      for (const m of c.sameVersionModules ?? []) expect(mod, c.name).toContain(`\t${m} ${c.version}`);
    }
  });
});
