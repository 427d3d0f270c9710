/**
 * `npm run release -- <version> [--dry-run] [--notes FILE]`, the effects around plan.ts: read
 * the files and git's state, refuse (nothing changed) or print the plan (`--dry-run`), else
 * write the files, commit `release <version>`, tag `v<version>` (annotated), then record the
 * release's commit in release/releases.json in a second commit — a commit cannot name its own id,
 * and clones without tags find releases there.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CONTRACT_VERSIONS, SUPPORTED_CONTRACTS } from '../contract/version.js';
import { CHANGELOG_FILE } from './changelog.js';
import { changedLines } from './diff.js';
import { GitError, gitIn, type Git } from './git.js';
import { locateRelease } from './locate.js';
import { planRelease, recordSubject, releaseRefusal, type Edit } from './plan.js';
import { parseReleases, RELEASES_FILE, tagOf, withRelease } from './releases.js';
import { VERSION_FILES, VersionFileError, versionsIn, type VersionFile } from './version-files.js';

export const RELEASE_USAGE = `usage: npm run release -- <version> [--dry-run] [--notes FILE]

  <version>      the new version, semver without a leading v (e.g. 0.2.0); greater than package.json's
  --dry-run      print what would change, change nothing
  --notes FILE   the release's notes (markdown) instead of CHANGELOG.md's Unreleased section

Sets the version in ${Object.values(VERSION_FILES).join(', ')}; adds the
CHANGELOG.md section (the notes, then the commit subjects since the previous release); commits
"release <version>", tags v<version>, and records the release's commit in ${RELEASES_FILE}.`;

export interface ReleaseIo {
  cwd: string;
  now: Date;
  out(text: string): void;
  err(text: string): void;
}

/** Runs the release; the exit code: 0 done, 1 refused or failed, 2 bad arguments. Nothing is changed unless it is 0. */
export function runRelease(argv: readonly string[], io: ReleaseIo): number {
  let args;
  try {
    args = parseArgs({ args: [...argv], allowPositionals: true, options: { 'dry-run': { type: 'boolean' }, notes: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  } catch (err) {
    io.err(`${err instanceof Error ? err.message : String(err)}\n${RELEASE_USAGE}`);
    return 2;
  }
  if (args.values.help) {
    io.out(RELEASE_USAGE);
    return 0;
  }
  const [requested, ...extra] = args.positionals;
  if (requested === undefined || extra.length > 0) {
    io.err(`${requested === undefined ? 'no version given' : `one version only, not ${args.positionals.join(' ')}`}\n${RELEASE_USAGE}`);
    return 2;
  }
  let notes: string | undefined;
  if (args.values.notes !== undefined) {
    try {
      notes = readFileSync(join(io.cwd, args.values.notes), 'utf8');
    } catch (err) {
      io.err(`--notes ${args.values.notes}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      return 2;
    }
  }
  try {
    return release(gitIn(io.cwd), requested, { dryRun: args.values['dry-run'] === true, notes }, io);
  } catch (err) {
    if (err instanceof GitError || err instanceof VersionFileError) {
      io.err(err.message);
      return 1;
    }
    throw err;
  }
}

function release(cwdGit: Git, requested: string, options: { dryRun: boolean; notes: string | undefined }, io: ReleaseIo): number {
  const root = cwdGit.run(['rev-parse', '--show-toplevel']);
  const git = gitIn(root);
  const read = (path: string) => readFileSync(join(root, path), 'utf8');
  const texts = Object.fromEntries(Object.entries(VERSION_FILES).map(([file, path]) => [file, read(path)])) as Record<VersionFile, string>;
  const current = versionsIn(texts).package;

  const dirty = git.run(['status', '--porcelain', '--untracked-files=no']).split('\n').filter(Boolean).map((line) => line.slice(3));
  const tagExists = git.tryRun(['rev-parse', '--verify', '--quiet', `refs/tags/${tagOf(requested)}`]) !== undefined;
  const refusal = releaseRefusal({ requested, current, dirty, tagExists });
  if (refusal) {
    io.err(refusal.message);
    return refusal.exit;
  }

  // The commits since the release of the current version: by its tag, else by its record.
  const releases = parseReleases(read(RELEASES_FILE));
  const previous = releases.releases.find((r) => r.version === current);
  if (!previous) {
    io.err(`the current version ${current} (package.json) is not in ${RELEASES_FILE}: the commits since its release cannot be found`);
    return 1;
  }
  const located = locateRelease(git, previous);
  if ('problem' in located) {
    io.err(located.problem);
    return 1;
  }
  const log = git.run(['log', '--no-merges', '--reverse', '--format=%s', `${located.commit}..HEAD`]);
  const plan = planRelease({
    version: requested,
    date: io.now.toISOString().slice(0, 10),
    previousVersion: current,
    subjects: log ? log.split('\n') : [],
    ...(options.notes !== undefined && { notes: options.notes }),
    texts,
    changelog: read(CHANGELOG_FILE),
  });
  const changed = plan.edits.filter((e) => e.before !== e.after);

  if (options.dryRun) {
    io.out(
      [
        `release ${current} -> ${plan.version} (dry run: nothing is changed)`,
        ...changed.filter((e) => e.path !== CHANGELOG_FILE).map((e) => changedLines(e.path, e.before, e.after)),
        `${CHANGELOG_FILE}: adds, below "## Unreleased":\n\n${plan.section.trimEnd()}`,
        `commit "${plan.commitMessage}" (${changed.map((e) => e.path).join(', ')}), annotated tag ${plan.tag}`,
        `then commit "${recordSubject(plan.version)}" (${RELEASES_FILE}: ${plan.version} -> the tagged commit)`,
      ].join('\n\n'),
    );
    return 0;
  }

  write(root, changed, 'after');
  try {
    git.run(['add', '--', ...changed.map((e) => e.path)]);
    git.run(['commit', '--quiet', '-m', plan.commitMessage]);
  } catch (err) {
    // Nothing committed: the files go back as they were.
    git.tryRun(['reset', '--quiet', '--', ...changed.map((e) => e.path)]);
    write(root, changed, 'before');
    throw err;
  }
  git.run(['tag', '--annotate', plan.tag, '--message', `volhook ${plan.version}`]);
  const commit = git.run(['rev-parse', 'HEAD']);
  writeFileSync(join(root, RELEASES_FILE), withRelease(releases, { version: plan.version, commit, contract: { speaks: CONTRACT_VERSIONS.current, serves: [...SUPPORTED_CONTRACTS] } }));
  git.run(['add', '--', RELEASES_FILE]);
  git.run(['commit', '--quiet', '-m', recordSubject(plan.version)]);
  io.out(`released ${plan.version}: commit ${commit.slice(0, 12)} "${plan.commitMessage}", tag ${plan.tag}; recorded in ${RELEASES_FILE}. Push both: git push origin HEAD ${plan.tag}`);
  return 0;
}

function write(root: string, edits: readonly Edit[], side: 'before' | 'after'): void {
  for (const edit of edits) writeFileSync(join(root, edit.path), edit[side]);
}
