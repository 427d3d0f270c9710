/**
 * Files mounted from a Secret, watched for a change: polling stat, which follows the symlinks a
 * Secret volume swaps on update; not persistent, so it never keeps the process alive. What
 * changed is re-read by the caller (secret.ts, tls.ts), which keeps the previous content when
 * the new one is unusable.
 */
import { unwatchFile, watchFile, type Stats } from 'node:fs';

/** Calls `changed` when any of `files` changes; returns the stop. */
export function watchFiles(files: readonly string[], pollMs: number, changed: () => void): () => void {
  const listener = (curr: Stats, prev: Stats) => {
    if (curr.mtimeMs !== prev.mtimeMs || curr.ino !== prev.ino || curr.size !== prev.size) changed();
  };
  for (const file of files) watchFile(file, { interval: pollMs, persistent: false }, listener);
  return () => {
    for (const file of files) unwatchFile(file, listener);
  };
}
