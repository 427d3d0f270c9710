/**
 * `npm run release -- <version> [--dry-run] [--notes FILE]`: bumps volhook's one version,
 * writes the changelog section, commits and tags (lib/release/run.ts).
 */
import { runRelease } from '../lib/release/run.js';

process.exitCode = runRelease(process.argv.slice(2), {
  cwd: process.cwd(),
  now: new Date(),
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`volhook release: ${text}\n`),
});
