/**
 * What `--dry-run` prints for a file: the lines that change, `-` before and `+` after, each with
 * its line number. Pure.
 */
export function changedLines(path: string, before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out = [`--- ${path}`, `+++ ${path}`];
  if (endA - start === endB - start) {
    // Lines replaced in place (a lockfile's two version lines, with others between them).
    for (let i = start; i < endA; i++) if (a[i] !== b[i]) out.push(`@@ ${i + 1} @@`, `-${a[i]}`, `+${b[i]}`);
  } else {
    out.push(`@@ ${start + 1} @@`, ...a.slice(start, endA).map((l) => `-${l}`), ...b.slice(start, endB).map((l) => `+${l}`));
  }
  return out.join('\n');
}
