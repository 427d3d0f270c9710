import { ec2Errors } from './errors.js';

/** Where a page ends: items are ordered by `seq`, so a token survives deletions in between. */
interface Cursor {
  after: number;
}

export function encodeToken(after: number): string {
  return Buffer.from(JSON.stringify({ after } satisfies Cursor)).toString('base64url');
}

function decodeToken(token: string): Cursor {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (typeof parsed.after === 'number') return { after: parsed.after };
  } catch {
    // falls through to the error below
  }
  throw ec2Errors.invalidValue(`The token '${token}' is invalid.`);
}

export interface PageRequest {
  maxResults?: number;
  nextToken?: string;
  /** The list of IDs in the request; EC2 refuses MaxResults together with it. */
  ids: readonly string[];
  /** EC2's parameter name for that list in the error message, e.g. `volumeSet`. */
  idsParameter: string;
  min: number;
  max: number;
}

/**
 * Cuts one page out of `items` (sorted by `seq`). Without MaxResults everything comes back
 * at once, as EC2 does.
 */
export function paginate<T extends { seq: number }>(
  items: readonly T[],
  req: PageRequest,
): { page: T[]; nextToken?: string } {
  if (req.maxResults !== undefined && req.ids.length > 0) {
    throw ec2Errors.combination(`The parameter ${req.idsParameter} cannot be used with the parameter maxResults`);
  }
  if (req.maxResults !== undefined && req.maxResults < req.min) {
    throw ec2Errors.invalidValue(
      `Value ( ${req.maxResults} ) for parameter maxResults is invalid. Parameter must be between ${req.min} and ${req.max}.`,
    );
  }
  const start = req.nextToken ? decodeToken(req.nextToken).after : -Infinity;
  const rest = items.filter((i) => i.seq > start);
  if (req.maxResults === undefined && !req.nextToken) return { page: rest };
  const size = Math.min(req.maxResults ?? req.max, req.max);
  const page = rest.slice(0, size);
  const last = page[page.length - 1];
  return rest.length > size && last ? { page, nextToken: encodeToken(last.seq) } : { page };
}
