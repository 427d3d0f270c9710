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

/** What an authorizer refused: the verb and the resource (with its subresource), as the 403's Status says. */
export interface ForbiddenRequest {
  verb: string;
  resource: string;
  /** The API group, '' for the core group. */
  group: string;
  /** Absent at the cluster scope. */
  namespace?: string;
}

/**
 * The request a 403 refused, read from the Status message the API server writes for an
 * authorization denial (`User "u" cannot create resource "persistentvolumes" in API group ""
 * at the cluster scope`, `… in the namespace "ns"`); undefined for any other error.
 */
export function forbiddenRequest(err: unknown): ForbiddenRequest | undefined {
  if (!isApiError(err, 403)) return undefined;
  const body = typeof err.body === 'string' ? safeParse(err.body) : err.body;
  const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  if (typeof message !== 'string') return undefined;
  const m = /cannot (\S+) resource "([^"]+)" in API group "([^"]*)"(?: in the namespace "([^"]+)")?/.exec(message);
  if (!m) return undefined;
  return { verb: m[1]!, resource: m[2]!, group: m[3]!, ...(m[4] !== undefined && { namespace: m[4] }) };
}
