import { isDeepStrictEqual } from 'node:util';

/** Whether a sync changed anything on its working copy of an object. */
export function changed(before: unknown, after: unknown): boolean {
  return !isDeepStrictEqual(before, after);
}
