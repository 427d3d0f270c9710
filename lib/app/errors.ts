/**
 * One error type for every refusal the API makes. Each carries the HTTP status and a code;
 * the app's single error handler turns it into `{ error: { code, message } }` and anything
 * else into a 500 that reveals nothing.
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ErrorResponse } from '../contract/index.js';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  toBody(): ErrorResponse {
    return { error: { code: this.code, message: this.message } };
  }
}

/** Formats zod issues as `path: message; …`, so a 422 names the field that is wrong. */
export function describeIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>, max = 5): string {
  const shown = issues.slice(0, max).map((issue) => {
    const path = issue.path.map(String).join('.') || '(body)';
    return `${path}: ${issue.message}`;
  });
  const more = issues.length > max ? ` (and ${issues.length - max} more)` : '';
  return shown.join('; ') + more;
}
