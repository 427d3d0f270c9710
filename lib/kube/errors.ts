/**
 * Recognising Kubernetes API errors. client-node 1.x throws `ApiException` with the HTTP status
 * in `.code`; the check is by shape, not `instanceof`, so it also holds when a bundle ends up
 * with two copies of client-node.
 */

/** An error answered by the API server (as opposed to a network failure). */
export interface ApiErrorLike {
  code: number;
  body?: unknown;
  message: string;
}

/** True when `err` is an API server answer, with status `code` when given (404, 409, 422…). */
export function isApiError(err: unknown, code?: number): err is ApiErrorLike {
  if (typeof err !== 'object' || err === null) return false;
  const candidate = err as { code?: unknown; body?: unknown };
  if (typeof candidate.code !== 'number' || !('body' in candidate)) return false;
  return code === undefined || candidate.code === code;
}

/** A one-line description for logs: the server's Status message when there is one. */
export function describeError(err: unknown): string {
  if (isApiError(err)) {
    const body = typeof err.body === 'string' ? safeParse(err.body) : err.body;
    const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
    return `HTTP ${err.code}${typeof message === 'string' ? `: ${message}` : ''}`;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
