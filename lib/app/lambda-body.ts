/**
 * A gzip'd request body that reached the function as text. API Gateway hands Lambda a body as
 * text unless it marks it base64 (`isBase64Encoded`); gzip's bytes do not survive being read as
 * text, so such a body cannot be decoded. It is refused with 415 and, unlike every answer of the
 * app, without `Accept-Encoding: gzip`: the forwarder sends the batch again as it is and stops
 * compressing (lib/forwarder/backend-client.ts), instead of every batch failing as corrupt gzip.
 */
import { GZIP, type ErrorResponse } from '../contract/index.js';

export interface LambdaBodyEvent {
  headers?: Record<string, string | string[] | undefined>;
  isBase64Encoded?: boolean;
  body?: string | null;
}

export interface LambdaRefusal {
  statusCode: 415;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
}

/** Pure: the refusal of a gzip'd body passed as text, or undefined for every other event. */
export function gzipBodyAsText(event: LambdaBodyEvent): LambdaRefusal | undefined {
  const coding = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'content-encoding')?.[1];
  const gzip = [coding ?? []].flat().join(',').trim().toLowerCase();
  if ((gzip !== GZIP && gzip !== 'x-gzip') || event.isBase64Encoded === true || !event.body) return undefined;
  const body: ErrorResponse = {
    error: { code: 'unsupported_encoding', message: "the gzip'd request body reached the function as text (not base64), so it cannot be decoded; send request bodies as they are" },
  };
  return { statusCode: 415, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), isBase64Encoded: false };
}
