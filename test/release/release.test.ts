/**
 * `npm run release -- <version>` (lib/release/run.ts) in a throw-away repository (repo.ts):
 * the dry run, the release itself, and each refusal, which changes nothing and has its control.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONTRACT_VERSIONS, SUPPORTED_CONTRACTS } from '../../lib/contract/index.js';
import { parseReleases, runRelease, versionsIn, type ReleaseIo } from '../../lib/release/index.js';
import { tempRepo, type TempRepo } from './repo.js';

const NOW = new Date('2026-12-24T10:00:00Z');
let repo: TempRepo | undefined;
afterEach(() => {
  repo?.remove();
  repo = undefined;
});

function release(argv: string[], r: TempRepo) {
  const out: string[] = [];
  const err: string[] = [];
  const io: ReleaseIo = { cwd: r.dir, now: NOW, out: (t) => void out.push(t), err: (t) => void err.push(t) };
  const code = runRelease(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const texts = (r: TempRepo) => ({
  package: r.read('package.json'),
  lock: r.read('package-lock.json'),
  chart: r.read('charts/volhook-forwarder/Chart.yaml'),
});

describe('npm run release -- 0.2.0', () => {
  it('--dry-run -> prints each version line it would change, the changelog section with the commits since v0.1.0, the commit and the tag; changes nothing', () => {
    repo = tempRepo();
    const before = repo.state();
    const { code, out } = release(['0.2.0', '--dry-run'], repo);
    expect(code).toBe(0);
    expect(out).toContain('release 0.1.0 -> 0.2.0 (dry run: nothing is changed)');
    expect(out).toContain('--- package-lock.json\n+++ package-lock.json\n@@ 3 @@\n-  "version": "0.1.0",\n+  "version": "0.2.0",\n@@ 9 @@\n-      "version": "0.1.0",\n+      "version": "0.2.0",');
    expect(out).toContain('-version: 0.1.0\n+version: 0.2.0');
    expect(out).toContain('-appVersion: "0.1.0"\n+appVersion: "0.2.0"');
    expect(out).toContain('## 0.2.0 — 2026-12-24');
    expect(out).toContain('Commits since 0.1.0:\n\n- docs: the first change after 0.1.0\n- forwarder: the second change');
    expect(out).not.toContain('- record release 0.1.0');
    expect(out).toContain('commit "release 0.2.0" (package.json, package-lock.json, charts/volhook-forwarder/Chart.yaml, CHANGELOG.md), annotated tag v0.2.0');
    expect(repo.state()).toBe(before);
  });

  it('-> every version file at 0.2.0 (nothing else in them changed), the changelog section from Unreleased and the commits, commit "release 0.2.0" tagged v0.2.0, then the record of its commit', () => {
    repo = tempRepo();
    const old = texts(repo);
    const oldChangelog = repo.read('CHANGELOG.md');
    const { code, out, err } = release(['0.2.0'], repo);
    expect(err).toBe('');
    expect(code).toBe(0);

    expect(versionsIn(texts(repo))).toEqual({ package: '0.2.0', lock: '0.2.0', lockRoot: '0.2.0', chart: '0.2.0', appVersion: '0.2.0' });
    const changedLineCount = (a: string, b: string) => a.split('\n').filter((line, i) => line !== b.split('\n')[i]).length;
    const now = texts(repo);
    expect(changedLineCount(old.package, now.package)).toBe(1);
    expect(changedLineCount(old.lock, now.lock)).toBe(2);
    expect(changedLineCount(old.chart, now.chart)).toBe(2);
    expect(parse(now.chart)).toMatchObject({ version: '0.2.0', appVersion: '0.2.0' });

    const changelog = repo.read('CHANGELOG.md');
    const unreleasedNotes = oldChangelog.split('## Unreleased\n')[1]!.split('\n## ')[0]!.trim();
    expect(changelog).toContain(`## Unreleased\n\n## 0.2.0 — 2026-12-24\n\n${unreleasedNotes}\n\nCommits since 0.1.0:\n\n- docs: the first change after 0.1.0\n- forwarder: the second change\n\n## 0.1.0 — `);
    expect(changelog.startsWith(oldChangelog.split('## Unreleased')[0]!)).toBe(true);

    const git = repo.git;
    expect(git.run(['log', '--format=%s', '-2'])).toBe('record release 0.2.0 in release/releases.json, for clones without tags\nrelease 0.2.0');
    const tagged = git.run(['rev-parse', 'v0.2.0^{commit}']);
    expect(git.run(['cat-file', '-t', 'v0.2.0'])).toBe('tag');
    expect(git.run(['rev-parse', 'HEAD~1'])).toBe(tagged);
    expect(git.run(['show', '--name-only', '--format=', tagged]).split('\n').sort()).toEqual(['CHANGELOG.md', 'charts/volhook-forwarder/Chart.yaml', 'package-lock.json', 'package.json']);
    expect(parseReleases(repo.read('release/releases.json')).releases).toEqual([
      { version: '0.2.0', commit: tagged, contract: { speaks: CONTRACT_VERSIONS.current, serves: [...SUPPORTED_CONTRACTS] } },
      { version: '0.1.0', commit: repo.released, contract: { speaks: 1, serves: [1] } },
    ]);
    expect(git.run(['status', '--porcelain', '--untracked-files=no'])).toBe('');
    expect(out).toContain(`released 0.2.0: commit ${tagged.slice(0, 12)} "release 0.2.0", tag v0.2.0`);
  });

  it('--notes FILE (untracked, which is no change to the work tree) -> its text in place of the Unreleased notes; the file stays out of the commit', () => {
    repo = tempRepo();
    repo.write('notes.md', 'Hand-written notes.\n');
    const { code } = release(['0.2.0', '--notes', 'notes.md'], repo);
    expect(code).toBe(0);
    expect(repo.read('CHANGELOG.md')).toContain('## 0.2.0 — 2026-12-24\n\nHand-written notes.\n\nCommits since 0.1.0:');
    expect(repo.git.run(['status', '--porcelain'])).toBe('?? notes.md');
  });

  it('the commits since v0.1.0 in a clone without tags -> found by the commit release/releases.json records', () => {
    repo = tempRepo();
    repo.git.run(['tag', '--delete', 'v0.1.0']);
    const { code, out } = release(['0.2.0', '--dry-run'], repo);
    expect(code).toBe(0);
    expect(out).toContain('Commits since 0.1.0:\n\n- docs: the first change after 0.1.0\n- forwarder: the second change');
  });
});

describe('npm run release refuses, changing nothing', () => {
  const refusals: Array<{ name: string; argv: string[]; exit: number; message: RegExp; setup?: (r: TempRepo) => void; undo?: (r: TempRepo) => void }> = [
    { name: '"v0.2.0" -> exit 2, not semver (no leading v)', argv: ['v0.2.0'], exit: 2, message: /"v0\.2\.0" is not a semantic version: .*without a leading v/ },
    { name: '"0.2" -> exit 2, not semver', argv: ['0.2'], exit: 2, message: /"0\.2" is not a semantic version/ },
    { name: 'no version -> exit 2 with the usage', argv: [], exit: 2, message: /no version given\nusage: npm run release -- <version>/ },
    { name: 'an unknown option -> exit 2 with the usage', argv: ['0.2.0', '--force'], exit: 2, message: /Unknown option '--force'[^]*usage:/ },
    { name: '--notes of a file that is not there -> exit 2 naming it', argv: ['0.2.0', '--notes', 'missing.md'], exit: 2, message: /--notes missing\.md: cannot read it \(ENOENT\)/ },
    {
      name: 'a tracked file changed and not committed -> exit 1 naming it',
      argv: ['0.2.0'],
      exit: 1,
      message: /the work tree has changes not committed \(docs\/one\.md\): commit or stash them first/,
      setup: (r) => r.write('docs/one.md', 'changed\n'),
      undo: (r) => r.git.run(['checkout', '--', 'docs/one.md']),
    },
    {
      name: 'tag v0.2.0 exists -> exit 1',
      argv: ['0.2.0'],
      exit: 1,
      message: /tag v0\.2\.0 exists already: 0\.2\.0 was released; pick a later version/,
      setup: (r) => r.git.run(['tag', 'v0.2.0']),
      undo: (r) => r.git.run(['tag', '--delete', 'v0.2.0']),
    },
    { name: '0.1.0, the current version, released -> exit 1 (its tag exists)', argv: ['0.1.0'], exit: 1, message: /tag v0\.1\.0 exists already: 0\.1\.0 was released/ },
    { name: '0.0.9 -> exit 1, not greater than 0.1.0', argv: ['0.0.9'], exit: 1, message: /0\.0\.9 is not greater than the current version 0\.1\.0 \(package\.json\)/ },
    { name: '0.1.0-rc.1 -> exit 1, a pre-release of the current version is lower', argv: ['0.1.0-rc.1'], exit: 1, message: /0\.1\.0-rc\.1 is not greater than the current version 0\.1\.0/ },
  ];

  for (const c of refusals) {
    it(`${c.name}; the control (the same repository, put right) releases 0.2.0`, () => {
      repo = tempRepo();
      c.setup?.(repo);
      const before = repo.state();
      const { code, err } = release(c.argv, repo);
      expect(code).toBe(c.exit);
      expect(err).toMatch(c.message);
      expect(repo.state()).toBe(before);
      expect(versionsIn(texts(repo)).package).toBe('0.1.0');

      c.undo?.(repo);
      expect(release(['0.2.0'], repo).code).toBe(0);
      expect(versionsIn(texts(repo)).package).toBe('0.2.0');
    });
  }

  it('a clone with neither the tag v0.1.0 nor the commit release/releases.json records -> exit 1 saying how to fetch them; control: with the record put right, it releases', () => {
    repo = tempRepo();
    const missing = 'f'.repeat(40);
    repo.write('release/releases.json', `${JSON.stringify({ releases: [{ version: '0.1.0', commit: missing, contract: { speaks: 1, serves: [1] } }] }, null, 2)}\n`);
    repo.git.run(['tag', '--delete', 'v0.1.0']);
    repo.commit('a record of a commit this clone lacks');
    const before = repo.state();
    const { code, err } = release(['0.2.0'], repo);
    expect(code).toBe(1);
    expect(err).toBe(`release 0.1.0 is not in this clone: no tag v0.1.0, and the commit release/releases.json records (${missing}) is missing; fetch tags (git fetch --tags) or the history (git fetch --unshallow)`);
    expect(repo.state()).toBe(before);

    repo.write('release/releases.json', `${JSON.stringify({ releases: [{ version: '0.1.0', commit: repo.released, contract: { speaks: 1, serves: [1] } }] }, null, 2)}\n`);
    repo.commit('the record put right');
    expect(release(['0.2.0'], repo).code).toBe(0);
  });
});

describe('bin/release.ts', () => {
  const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));
  const bin = fileURLToPath(new URL('../../bin/release.ts', import.meta.url));

  it('run in a repository: --dry-run -> exit 0 and the plan; no version -> exit 2 and the usage on stderr', () => {
    repo = tempRepo();
    const dry = spawnSync(tsx, [bin, '0.2.0', '--dry-run'], { cwd: repo.dir, encoding: 'utf8' });
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain('release 0.1.0 -> 0.2.0 (dry run: nothing is changed)');
    const bare = spawnSync(tsx, [bin], { cwd: repo.dir, encoding: 'utf8' });
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('volhook release: no version given');
  });
});
