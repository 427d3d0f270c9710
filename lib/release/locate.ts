/**
 * Where a release is in this clone: its tag `v<version>` when the clone has tags, else the
 * commit release/releases.json records — an ancestor of HEAD either way. A clone with neither
 * (shallow, no tags) gets a message saying how to fetch them. Used by the release script (the
 * commits since the previous release) and the skew test (the previous release's tree).
 */
import type { Git } from './git.js';
import { RELEASES_FILE, tagOf, type Release } from './releases.js';

export type Located = { commit: string; via: 'tag' | 'record' } | { problem: string };

export function locateRelease(git: Git, release: Release): Located {
  const tag = tagOf(release.version);
  const tagged = git.tryRun(['rev-parse', '--verify', '--quiet', `refs/tags/${tag}^{commit}`]);
  if (tagged !== undefined && tagged !== release.commit) {
    return { problem: `tag ${tag} is commit ${tagged}, but ${RELEASES_FILE} records ${release.commit} for ${release.version}: one of them is wrong` };
  }
  const via = tagged !== undefined ? 'tag' : 'record';
  if (via === 'record' && git.tryRun(['cat-file', '-e', `${release.commit}^{commit}`]) === undefined) {
    return {
      problem: `release ${release.version} is not in this clone: no tag ${tag}, and the commit ${RELEASES_FILE} records (${release.commit}) is missing; fetch tags (git fetch --tags) or the history (git fetch --unshallow)`,
    };
  }
  if (git.tryRun(['merge-base', '--is-ancestor', release.commit, 'HEAD']) === undefined) {
    return { problem: `release ${release.version} (${release.commit}, by ${via === 'tag' ? `tag ${tag}` : RELEASES_FILE}) is not an ancestor of HEAD` };
  }
  return { commit: release.commit, via };
}
