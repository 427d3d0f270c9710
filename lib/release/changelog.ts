/**
 * CHANGELOG.md at a release: the `## Unreleased` section's notes (or those given with `--notes`)
 * become the release's section, `## <version> — <date>`, followed by the subjects of the commits
 * since the previous release; an empty `## Unreleased` stays on top for what comes next. Pure.
 */
export const CHANGELOG_FILE = 'CHANGELOG.md';
export const UNRELEASED_HEADING = '## Unreleased';

export interface ChangelogRelease {
  version: string;
  /** `YYYY-MM-DD`. */
  date: string;
  previousVersion: string;
  /** Oldest first. */
  subjects: readonly string[];
  /** In place of the Unreleased section's notes. */
  notes?: string;
}

/** The release's heading: what the skew test, the docs and readers look for. */
export function releaseHeading(version: string, date: string): string {
  return `## ${version} — ${date}`;
}

/** The section the release adds (heading, notes, commits), as it will read. */
export function releaseSection(release: ChangelogRelease, unreleasedNotes: string): string {
  const notes = (release.notes ?? unreleasedNotes).trim();
  const commits = release.subjects.length > 0 ? release.subjects.map((s) => `- ${s}`).join('\n') : '- (none)';
  return [releaseHeading(release.version, release.date), ...(notes ? [notes] : []), `Commits since ${release.previousVersion}:`, commits].join('\n\n') + '\n';
}

/** The whole file after the release. */
export function releaseChangelog(text: string, release: ChangelogRelease): { text: string; section: string } {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === UNRELEASED_HEADING);
  const firstRelease = lines.findIndex((line) => line.startsWith('## '));
  let before: string[];
  let notes: string[];
  let after: string[];
  if (start === -1) {
    const at = firstRelease === -1 ? lines.length : firstRelease;
    [before, notes, after] = [lines.slice(0, at), [], lines.slice(at)];
  } else {
    const next = lines.findIndex((line, i) => i > start && line.startsWith('## '));
    const end = next === -1 ? lines.length : next;
    [before, notes, after] = [lines.slice(0, start), lines.slice(start + 1, end), lines.slice(end)];
  }
  const section = releaseSection(release, notes.join('\n'));
  const head = before.join('\n').replace(/\n*$/, '\n\n');
  const rest = after.join('\n').replace(/^\n*/, '');
  return { text: `${head}${UNRELEASED_HEADING}\n\n${section}${rest ? `\n${rest}` : ''}`.replace(/\n*$/, '\n'), section };
}
