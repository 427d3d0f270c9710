/**
 * A throw-away git repository holding the files a release touches, copied from this one, with
 * 0.1.0 released in it (tagged, recorded in release/releases.json) and two commits since.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gitIn, type Git } from '../../lib/release/index.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const COPIED = ['package.json', 'package-lock.json', 'charts/volhook-forwarder/Chart.yaml', 'CHANGELOG.md'];

export interface TempRepo {
  dir: string;
  git: Git;
  /** The commit 0.1.0 was released from. */
  released: string;
  read(path: string): string;
  write(path: string, text: string): void;
  commit(subject: string): void;
  /** The commit, tags and tree state, to show nothing changed. */
  state(): string;
  remove(): void;
}

export function tempRepo(): TempRepo {
  const dir = mkdtempSync(join(tmpdir(), 'volhook-release-'));
  const git = gitIn(dir);
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  const commit = (subject: string) => {
    git.run(['add', '-A']);
    git.run(['commit', '--quiet', '-m', subject]);
  };
  for (const path of COPIED) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    cpSync(join(repoRoot, path), join(dir, path));
  }
  git.run(['init', '--quiet', '--initial-branch=main']);
  for (const [key, value] of [['user.name', 'Release Test'], ['user.email', 'release-test@example.com'], ['commit.gpgSign', 'false'], ['tag.gpgSign', 'false']]) git.run(['config', key!, value!]);
  commit('the work of 0.1.0');
  const released = git.run(['rev-parse', 'HEAD']);
  git.run(['tag', '--annotate', 'v0.1.0', '--message', 'volhook 0.1.0']);
  write('release/releases.json', `${JSON.stringify({ releases: [{ version: '0.1.0', commit: released, contract: { speaks: 1, serves: [1] } }] }, null, 2)}\n`);
  commit('record release 0.1.0 in release/releases.json, for clones without tags');
  write('docs/one.md', 'one\n');
  commit('docs: the first change after 0.1.0');
  write('docs/two.md', 'two\n');
  commit('forwarder: the second change');
  return {
    dir,
    git,
    released,
    read: (path) => readFileSync(join(dir, path), 'utf8'),
    write,
    commit,
    state: () => [git.run(['rev-parse', 'HEAD']), git.run(['tag', '--list']), git.run(['status', '--porcelain'])].join('\n'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
