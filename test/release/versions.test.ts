/**
 * This repository's versions agree: one version in every file that holds it, the releases
 * recorded where the skew test finds them, and docs/upgrade.md's table saying what the
 * records and this build say.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONTRACT_VERSIONS, SUPPORTED_CONTRACTS, VOLHOOK_VERSION } from '../../lib/contract/index.js';
import { gitIn, locateRelease, parseReleases, RELEASES_FILE, VERSION_FILES, versionsIn, type VersionFile } from '../../lib/release/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const releases = parseReleases(read(RELEASES_FILE)).releases;

describe('one version', () => {
  it("package.json, package-lock.json, the chart's version and appVersion (the image tag's default) -> the same version, the build's", () => {
    const texts = Object.fromEntries(Object.entries(VERSION_FILES).map(([file, path]) => [file, read(path)])) as Record<VersionFile, string>;
    const versions = versionsIn(texts);
    expect(new Set(Object.values(versions))).toEqual(new Set([VOLHOOK_VERSION]));
  });
});

describe('the releases recorded', () => {
  it('0.1.0 -> commit 904364f, contract 1 spoken and served; each release an ancestor of HEAD, found by its tag where this clone has it', () => {
    expect(releases.find((r) => r.version === '0.1.0')).toEqual({ version: '0.1.0', commit: '904364f3e7517461e7417069c2b2f2bd4f0519c8', contract: { speaks: 1, serves: [1] } });
    const git = gitIn(root);
    for (const release of releases) expect(locateRelease(git, release), release.version).toMatchObject({ commit: release.commit });
  });
});

describe('docs/upgrade.md', () => {
  const rows = read('docs/upgrade.md')
    .split('\n')
    .filter((line) => /^\| \d+\.\d+\.\d+/.test(line))
    .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));
  const contracts = (cell: string) => cell.split(',').map((c) => Number.parseInt(c, 10));

  it('a row for every recorded release -> the contract its forwarder speaks and those its backend serves', () => {
    for (const release of releases) {
      const row = rows.find((r) => r[0]!.split(' ')[0] === release.version);
      expect(row, `a row for ${release.version}`).toBeDefined();
      expect(contracts(row![1]!)).toEqual([release.contract.speaks]);
      expect(contracts(row![2]!)).toEqual(release.contract.serves);
    }
  });

  it("this build's contracts -> the row of the latest release, or one marked (unreleased)", () => {
    const matching = rows.filter((r) => contracts(r[1]!)[0] === CONTRACT_VERSIONS.current && JSON.stringify(contracts(r[2]!)) === JSON.stringify(SUPPORTED_CONTRACTS));
    const latest = releases[0]!;
    expect(matching.some((r) => r[0]!.includes('(unreleased)') || r[0] === latest.version)).toBe(true);
  });

  it('README links it; its first two commands stay first', () => {
    expect(read('README.md')).toContain('[docs/upgrade.md](docs/upgrade.md)');
    expect(read('README.md').split('\n').slice(2, 6)).toEqual([
      '```sh',
      'npm ci && npm start    # the local stack: EC2 simulator, Kubernetes API, backend, forwarder',
      'npm ci && npm test     # type-check, then every unit and end-to-end suite',
      '```',
    ]);
  });
});
