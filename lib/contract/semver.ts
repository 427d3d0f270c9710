/**
 * Semantic versions (https://semver.org, 2.0.0): the one reading of a version string for the
 * forwarder's version header, the release script and the release record. Precedence follows
 * the spec's section 11: major, minor, patch numerically; a pre-release is lower than its
 * release; pre-release identifiers compare numerically when numeric, else in ASCII order, a
 * numeric one lower than an alphanumeric one, a shorter list lower; build metadata is ignored.
 */
import * as z from 'zod/mini';
import { deferred } from './deferred.js';
import './zod-messages.js';

/** The spec's own pattern (its "suggested regular expression"), anchored. */
export const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export interface Semver {
  major: number;
  minor: number;
  patch: number;
  /** Pre-release identifiers (`1.0.0-rc.1` → `['rc', '1']`); empty for a release. */
  prerelease: string[];
  build: string[];
}

/** The version `text` stands for, or undefined when it is not a semantic version. */
export function parseSemver(text: string): Semver | undefined {
  const match = SEMVER_PATTERN.exec(text);
  if (!match) return undefined;
  const [, major, minor, patch, prerelease, build] = match;
  return {
    major: Number(major),
    minor: Number(minor),
    patch: Number(patch),
    prerelease: prerelease ? prerelease.split('.') : [],
    build: build ? build.split('.') : [],
  };
}

/** Negative when `a` precedes `b`, positive when it follows it, 0 when they rank the same. */
export function compareSemver(a: Semver, b: Semver): number {
  for (const field of ['major', 'minor', 'patch'] as const) {
    if (a[field] !== b[field]) return a[field] - b[field];
  }
  // A release outranks its own pre-releases.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return b.prerelease.length - a.prerelease.length;
  for (let i = 0; i < Math.min(a.prerelease.length, b.prerelease.length); i++) {
    const order = compareIdentifier(a.prerelease[i] as string, b.prerelease[i] as string);
    if (order !== 0) return order;
  }
  return a.prerelease.length - b.prerelease.length;
}

function compareIdentifier(a: string, b: string): number {
  const numeric = (s: string) => /^\d+$/.test(s);
  if (numeric(a) && numeric(b)) return Number(a) - Number(b);
  if (numeric(a) !== numeric(b)) return numeric(a) ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A semantic version, as a string. */
export const SemverSchema = deferred(() => z.string().check(z.regex(SEMVER_PATTERN, 'not a semantic version (MAJOR.MINOR.PATCH, e.g. 0.2.0)')));
