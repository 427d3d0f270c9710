/**
 * Where the previous release is (lib/release/locate.ts, releases.ts), as the skew test and the
 * release script find it: by tag, else by the recorded commit, an ancestor of HEAD; otherwise
 * a message that says what is missing and how to fetch it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { latestBefore, locateRelease, parseReleases, withRelease, type Release } from '../../lib/release/index.js';
import { tempRepo, type TempRepo } from './repo.js';

let repo: TempRepo | undefined;
afterEach(() => {
  repo?.remove();
  repo = undefined;
});

const release = (version: string, commit: string): Release => ({ version, commit, contract: { speaks: 1, serves: [1] } });

describe('locateRelease', () => {
  it('tag v0.1.0 present -> its commit, via the tag', () => {
    repo = tempRepo();
    expect(locateRelease(repo.git, release('0.1.0', repo.released))).toEqual({ commit: repo.released, via: 'tag' });
  });

  it('no tag (a CI clone without tags) -> the recorded commit, via the record', () => {
    repo = tempRepo();
    repo.git.run(['tag', '--delete', 'v0.1.0']);
    expect(locateRelease(repo.git, release('0.1.0', repo.released))).toEqual({ commit: repo.released, via: 'record' });
  });

  it('neither the tag nor the recorded commit -> a problem naming both and how to fetch them', () => {
    repo = tempRepo();
    repo.git.run(['tag', '--delete', 'v0.1.0']);
    const missing = 'a'.repeat(40);
    expect(locateRelease(repo.git, release('0.1.0', missing))).toEqual({
      problem: `release 0.1.0 is not in this clone: no tag v0.1.0, and the commit release/releases.json records (${missing}) is missing; fetch tags (git fetch --tags) or the history (git fetch --unshallow)`,
    });
  });

  it('the tag on another commit than the record -> a problem naming both', () => {
    repo = tempRepo();
    const head = repo.git.run(['rev-parse', 'HEAD']);
    expect(locateRelease(repo.git, release('0.1.0', head))).toEqual({ problem: `tag v0.1.0 is commit ${repo.released}, but release/releases.json records ${head} for 0.1.0: one of them is wrong` });
  });

  it('a recorded commit that is not an ancestor of HEAD -> a problem', () => {
    repo = tempRepo();
    repo.git.run(['tag', '--delete', 'v0.1.0']);
    repo.git.run(['checkout', '--quiet', '--orphan', 'elsewhere']);
    repo.commit('unrelated history');
    const unrelated = repo.git.run(['rev-parse', 'HEAD']);
    repo.git.run(['checkout', '--quiet', 'main']);
    expect(locateRelease(repo.git, release('0.0.1', unrelated))).toEqual({ problem: `release 0.0.1 (${unrelated}, by release/releases.json) is not an ancestor of HEAD` });
  });
});

describe('release/releases.json', () => {
  const a = release('0.1.0', '1'.repeat(40));
  const b = release('0.2.0', '2'.repeat(40));
  const c = release('0.10.0', '3'.repeat(40));

  it('the latest release before HEAD -> the newest by semver; at the release commit itself, the one before it', () => {
    const releases = { releases: [a, c, b] };
    expect(latestBefore(releases, 'f'.repeat(40))).toEqual(c);
    expect(latestBefore(releases, c.commit)).toEqual(b);
    expect(latestBefore({ releases: [] }, c.commit)).toBeUndefined();
  });

  it('a release added -> newest first, as npm writes JSON; the file in this repository parses', () => {
    const text = withRelease({ releases: [a] }, b);
    expect(parseReleases(text).releases.map((r) => r.version)).toEqual(['0.2.0', '0.1.0']);
    expect(text).toBe(`${JSON.stringify({ releases: [b, a] }, null, 2)}\n`);
    expect(() => parseReleases('{"releases":[{"version":"v1","commit":"x","contract":{"speaks":1,"serves":[1]}}]}')).toThrow(/release\/releases\.json is malformed/);
  });
});
