/**
 * `audit --help` says when disks are marked as the audit does it: every audit marks the
 * provably orphaned, with --delete or not (test/audit/run.test.ts, "without --delete -> the
 * provable orphans are marked all the same"); --delete only removes those marked before.
 */
import { describe, expect, it } from 'vitest';
import { commandUsage } from '../../lib/cli/index.js';

describe('cluster audit --help', () => {
  const help = commandUsage('audit').replace(/\s+/g, ' ');

  it('says every audit marks, with --delete or not, and --delete removes those marked earlier', () => {
    expect(help).toContain('every audit, with --delete or not, marks the provably orphaned ones');
    expect(help).toContain('--delete removes those marked by an earlier audit');
    expect(help).toContain('(any audit marks them)');
  });

  it('no longer says that --delete marks, nor that the first --delete audit only marks', () => {
    expect(help).not.toMatch(/--delete marks/);
    expect(help).not.toMatch(/the first marks them/);
  });
});
