/**
 * The files that hold volhook's one version, and how a release sets it in each: package.json
 * (the source), package-lock.json's root, and the chart's `version` and `appVersion` (the image
 * tag the chart defaults to: values.yaml names no tag). Pure: text in, text out;
 * every other byte of each file stays as it was.
 */
export const VERSION_FILES = {
  package: 'package.json',
  lock: 'package-lock.json',
  chart: 'charts/volhook-forwarder/Chart.yaml',
} as const;

export type VersionFile = keyof typeof VERSION_FILES;

/** A file that does not hold its version where a release expects it. */
export class VersionFileError extends Error {
  override readonly name = 'VersionFileError';
}

const CHART_FIELDS = { version: /^version:[ \t]*(.*)$/gm, appVersion: /^appVersion:[ \t]*(.*)$/gm };

/** The version each file holds now. */
export function versionsIn(texts: Record<VersionFile, string>): Record<'package' | 'lock' | 'lockRoot' | 'chart' | 'appVersion', string> {
  const lock = canonicalJson(VERSION_FILES.lock, texts.lock) as { version?: string; packages?: Record<string, { version?: string }> };
  return {
    package: String((canonicalJson(VERSION_FILES.package, texts.package) as { version?: unknown }).version),
    lock: String(lock.version),
    lockRoot: String(lock.packages?.['']?.version),
    chart: unquote(only(CHART_FIELDS.version, texts.chart, `${VERSION_FILES.chart}: version`)[1]),
    appVersion: unquote(only(CHART_FIELDS.appVersion, texts.chart, `${VERSION_FILES.chart}: appVersion`)[1]),
  };
}

/** Each file's text with `version` in place of the one it holds. */
export function withVersion(texts: Record<VersionFile, string>, version: string): Record<VersionFile, string> {
  const pkg = canonicalJson(VERSION_FILES.package, texts.package) as Record<string, unknown>;
  const lock = canonicalJson(VERSION_FILES.lock, texts.lock) as Record<string, unknown> & { packages?: Record<string, Record<string, unknown>> };
  const lockRoot = lock.packages?.[''];
  if (!lockRoot) throw new VersionFileError(`${VERSION_FILES.lock} has no packages[""] (the root package)`);
  pkg.version = version;
  lock.version = version;
  lockRoot.version = version;
  only(CHART_FIELDS.version, texts.chart, `${VERSION_FILES.chart}: version`);
  only(CHART_FIELDS.appVersion, texts.chart, `${VERSION_FILES.chart}: appVersion`);
  return {
    package: json(pkg),
    lock: json(lock),
    chart: texts.chart.replace(CHART_FIELDS.version, `version: ${version}`).replace(CHART_FIELDS.appVersion, `appVersion: "${version}"`),
  };
}

/** JSON as npm writes it (two spaces, a final newline); anything else is refused, not rewritten. */
function canonicalJson(path: string, text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new VersionFileError(`${path} is not valid JSON`);
  }
  if (json(value) !== text) throw new VersionFileError(`${path} is not formatted as npm writes it (2 spaces, final newline); run npm install --package-lock-only, or format it, first`);
  return value;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function only(pattern: RegExp, text: string, what: string): RegExpMatchArray {
  const matches = [...text.matchAll(pattern)];
  if (matches.length !== 1) throw new VersionFileError(`${what}: expected one such line, found ${matches.length}`);
  return matches[0]!;
}

function unquote(value: string | undefined): string {
  return (value ?? '').trim().replace(/^(["'])(.*)\1$/, '$2');
}
