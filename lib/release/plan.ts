/**
 * What `npm run release -- <version>` decides, purely: whether it may release (each refusal
 * with its exit code: 2 for an argument that is wrong, 1 for a repository that is not ready),
 * and what it changes — the version files, the changelog, the commit and the tag.
 */
import { compareSemver, parseSemver } from '../contract/semver.js';
import { CHANGELOG_FILE, releaseChangelog } from './changelog.js';
import { tagOf } from './releases.js';
import { VERSION_FILES, withVersion, type VersionFile } from './version-files.js';

export interface Refusal {
  exit: 1 | 2;
  message: string;
}

export interface ReleaseFacts {
  requested: string;
  /** package.json's version now. */
  current: string;
  /** Tracked files with changes not committed. */
  dirty: readonly string[];
  /** Tag `v<requested>` exists. */
  tagExists: boolean;
}

/** Why this release may not be made, or undefined when it may. */
export function releaseRefusal(facts: ReleaseFacts): Refusal | undefined {
  const requested = parseSemver(facts.requested);
  if (!requested) {
    return { exit: 2, message: `"${facts.requested}" is not a semantic version: MAJOR.MINOR.PATCH, optionally -PRERELEASE, without a leading v (e.g. 0.2.0)` };
  }
  if (facts.dirty.length > 0) {
    return { exit: 1, message: `the work tree has changes not committed (${facts.dirty.join(', ')}): commit or stash them first, so that the release commit holds the release's changes only` };
  }
  if (facts.tagExists) return { exit: 1, message: `tag ${tagOf(facts.requested)} exists already: ${facts.requested} was released; pick a later version` };
  const current = parseSemver(facts.current);
  if (current && compareSemver(requested, current) <= 0) {
    return { exit: 1, message: `${facts.requested} is not greater than the current version ${facts.current} (package.json): pick a later version` };
  }
  return undefined;
}

export interface Edit {
  path: string;
  before: string;
  after: string;
}

export interface ReleasePlan {
  version: string;
  tag: string;
  edits: Edit[];
  /** The changelog section the release adds. */
  section: string;
  commitMessage: string;
}

export const releaseSubject = (version: string) => `release ${version}`;
export const recordSubject = (version: string) => `record release ${version} in release/releases.json, for clones without tags`;

/** The commit subjects a changelog lists: not the release script's own commits. */
export function changelogSubjects(subjects: readonly string[]): string[] {
  return subjects.filter((s) => !/^(record )?release \d+\.\d+\.\d+\S*( |$)/.test(s));
}

export function planRelease(input: {
  version: string;
  /** `YYYY-MM-DD`. */
  date: string;
  previousVersion: string;
  /** Subjects of the commits since the previous release, oldest first. */
  subjects: readonly string[];
  notes?: string;
  texts: Record<VersionFile, string>;
  changelog: string;
}): ReleasePlan {
  const bumped = withVersion(input.texts, input.version);
  const changelog = releaseChangelog(input.changelog, {
    version: input.version,
    date: input.date,
    previousVersion: input.previousVersion,
    subjects: changelogSubjects(input.subjects),
    ...(input.notes !== undefined && { notes: input.notes }),
  });
  const edits: Edit[] = (Object.keys(VERSION_FILES) as VersionFile[]).map((file) => ({ path: VERSION_FILES[file], before: input.texts[file], after: bumped[file] }));
  edits.push({ path: CHANGELOG_FILE, before: input.changelog, after: changelog.text });
  return { version: input.version, tag: tagOf(input.version), edits, section: changelog.section, commitMessage: releaseSubject(input.version) };
}
