/**
 * release/releases.json: every release with the commit it was made from, and the contracts its
 * forwarder speaks and its backend serves. Tags say the same; the file is for clones without
 * tags (CI's), and it is what docs/upgrade.md's table is checked against.
 */
import * as z from 'zod/mini';
import { compareSemver, parseSemver, SemverSchema } from '../contract/semver.js';

export const RELEASES_FILE = 'release/releases.json';

export const ReleaseSchema = z.object({
  version: SemverSchema,
  /** The commit tagged `v<version>`. */
  commit: z.string().check(z.regex(/^[0-9a-f]{40}$/, 'a full 40-character commit id')),
  contract: z.object({
    /** The contract its forwarder speaks. */
    speaks: z.int(),
    /** The contracts its backend serves. */
    serves: z.array(z.int()),
  }),
});
export type Release = z.infer<typeof ReleaseSchema>;

export const ReleasesSchema = z.object({ releases: z.array(ReleaseSchema) });
export type Releases = z.infer<typeof ReleasesSchema>;

/** The git tag of a release. */
export function tagOf(version: string): string {
  return `v${version}`;
}

/** The file's text, parsed; throws naming what is wrong. */
export function parseReleases(text: string): Releases {
  const parsed = ReleasesSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${RELEASES_FILE} is malformed:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The file's text with `release` added, newest first, as the file keeps them. */
export function withRelease(releases: Releases, release: Release): string {
  const all = [release, ...releases.releases.filter((r) => r.version !== release.version)].sort(newestFirst);
  return `${JSON.stringify({ releases: all }, null, 2)}\n`;
}

/** The latest release before `head`: the newest recorded one that is not `head` itself. */
export function latestBefore(releases: Releases, head: string): Release | undefined {
  return [...releases.releases].sort(newestFirst).find((r) => r.commit !== head);
}

function newestFirst(a: Release, b: Release): number {
  return compareSemver(parseSemver(b.version)!, parseSemver(a.version)!);
}
