/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the forwarder signs each
 * request body with its cluster's secret; the backend verifies before it parses anything.
 *
 * Secrets are `whsec_<base64 key>` as the spec writes them; a secret without the prefix is
 * used as raw UTF-8 bytes. Several secrets may be accepted at once so that a cluster's
 * secret can be rotated without downtime.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

export const SignatureHeaders = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

function keyBytes(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

function hmac(secret: string, id: string, timestamp: string, body: string): Buffer {
  return createHmac('sha256', keyBytes(secret)).update(`${id}.${timestamp}.${body}`).digest();
}

/** Headers for `body`, signed with `secret`. `now` is Unix seconds (tests move it). */
export function sign(
  body: string,
  secret: string,
  options: { id?: string; now?: number } = {},
): Record<string, string> {
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = String(options.now ?? Math.floor(Date.now() / 1000));
  const signature = hmac(secret, id, timestamp, body).toString('base64');
  return {
    [SignatureHeaders.id]: id,
    [SignatureHeaders.timestamp]: timestamp,
    [SignatureHeaders.signature]: `v1,${signature}`,
  };
}

/** Why a request was refused; the message is safe to return to the caller. */
export class SignatureError extends Error {
  override readonly name = 'SignatureError';
}

/**
 * Accepts the request when any `v1` signature in the header matches any of `secrets`,
 * and the timestamp is within ±5 minutes of `now`. Throws `SignatureError` otherwise.
 */
export function verify(
  headers: { get(name: string): string | null | undefined },
  body: string,
  secrets: readonly string[],
  now: number = Math.floor(Date.now() / 1000),
): void {
  const id = headers.get(SignatureHeaders.id);
  const timestamp = headers.get(SignatureHeaders.timestamp);
  const signatureHeader = headers.get(SignatureHeaders.signature);
  if (!id || !timestamp || !signatureHeader) {
    const missing = Object.values(SignatureHeaders).filter((h) => !headers.get(h));
    throw new SignatureError(`missing signature header(s): ${missing.join(', ')}`);
  }
  if (!/^\d+$/.test(timestamp)) throw new SignatureError('webhook-timestamp must be Unix seconds');
  const skew = Number(timestamp) - now;
  if (Math.abs(skew) > SIGNATURE_TOLERANCE_SECONDS) {
    throw new SignatureError(
      `webhook-timestamp is ${Math.abs(skew)} s ${skew < 0 ? 'old' : 'in the future'}; at most ${SIGNATURE_TOLERANCE_SECONDS} s is accepted`,
    );
  }
  const offered = signatureHeader
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .map((part) => Buffer.from(part.slice(3), 'base64'));
  if (offered.length === 0) throw new SignatureError('webhook-signature has no v1 signature');
  for (const secret of secrets) {
    const expected = hmac(secret, id, timestamp, body);
    // Every candidate is compared in constant time; lengths differ only for garbage input.
    if (offered.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected))) return;
  }
  throw new SignatureError('webhook-signature does not match the body for any of this cluster\'s secrets');
}
