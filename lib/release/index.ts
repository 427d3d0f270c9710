export { runRelease, RELEASE_USAGE, type ReleaseIo } from './run.js';
export { releaseRefusal, planRelease, changelogSubjects, releaseSubject, recordSubject, type Refusal, type ReleaseFacts, type ReleasePlan, type Edit } from './plan.js';
export { releaseChangelog, releaseSection, releaseHeading, CHANGELOG_FILE, UNRELEASED_HEADING, type ChangelogRelease } from './changelog.js';
export { versionsIn, withVersion, VERSION_FILES, VersionFileError, type VersionFile } from './version-files.js';
export { parseReleases, withRelease, latestBefore, tagOf, ReleasesSchema, ReleaseSchema, RELEASES_FILE, type Release, type Releases } from './releases.js';
export { locateRelease, type Located } from './locate.js';
export { gitIn, GitError, type Git } from './git.js';
export { changedLines } from './diff.js';
