/**
 * The store throws `KubeApiError`s; the controllers only branch on their `reason`, read
 * structurally so this folder does not depend on the server's internals.
 */
function reasonOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { reason?: unknown }).reason : undefined;
}

export function isConflict(error: unknown): boolean {
  return reasonOf(error) === 'Conflict';
}

export function isNotFound(error: unknown): boolean {
  return reasonOf(error) === 'NotFound';
}

export function isAlreadyExists(error: unknown): boolean {
  return reasonOf(error) === 'AlreadyExists';
}

/**
 * Errors that only mean "the world moved while this sync ran" — another writer got there
 * first, or the object came or went. The sync is retried at once, without a log line.
 */
export function isRace(error: unknown): boolean {
  return isConflict(error) || isNotFound(error) || isAlreadyExists(error);
}
