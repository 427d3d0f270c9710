/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the forwarder signs each
 * request body with its cluster's secret; the backend verifies before it parses anything.
 *
 * Secrets are `whsec_<base64 key>` as the spec writes them; a secret without the prefix is
 * used as raw UTF-8 bytes. Either way the key must be 24–64 bytes, the spec's range: one rule,
 * `checkWebhookSecret`, used by the registry, the cluster CLI, the forwarder and `verify`.
 * Several secrets may be accepted at once so that a cluster's secret can be rotated without
 * downtime.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import * as z from 'zod/mini';
import { deferred } from './deferred.js';
import './zod-messages.js';

export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

export const SignatureHeaders = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const WEBHOOK_KEY_MIN_BYTES = 24;
export const WEBHOOK_KEY_MAX_BYTES = 64;

/**
 * The HMAC key `secret` stands for, or why it cannot be one. The base64 after `whsec_` must be
 * canonical (standard alphabet, padded): Node's decoder silently skips characters it does not
 * know, which is how `whsec_` + garbage once became an empty key. Problems never quote the secret.
 */
export function checkWebhookSecret(secret: string): { key: Buffer } | { problem: string } {
  let key: Buffer;
  if (secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
    key = Buffer.from(encoded, 'base64');
    if (key.toString('base64') !== encoded) return { problem: `the part after ${WEBHOOK_SECRET_PREFIX} is not canonical base64` };
  } else {
    key = Buffer.from(secret, 'utf8');
  }
  if (key.length < WEBHOOK_KEY_MIN_BYTES || key.length > WEBHOOK_KEY_MAX_BYTES) {
    return { problem: `the key is ${key.length} bytes; a webhook secret's key must be ${WEBHOOK_KEY_MIN_BYTES}–${WEBHOOK_KEY_MAX_BYTES} bytes` };
  }
  return { key };
}

/** The key of a valid secret; throws an Error saying what is wrong otherwise. */
export function webhookSecretKey(secret: string): Buffer {
  const checked = checkWebhookSecret(secret);
  if ('problem' in checked) throw new Error(`unusable webhook secret: ${checked.problem}`);
  return checked.key;
}

/** A webhook secret that `checkWebhookSecret` accepts. */
export const WebhookSecretSchema = deferred(() => z.string().check(
  z.superRefine((secret, ctx) => {
    const checked = checkWebhookSecret(secret);
    if ('problem' in checked) ctx.addIssue({ code: 'custom', message: `unusable webhook secret: ${checked.problem}` });
  }),
));

function hmac(key: Buffer, id: string, timestamp: string, body: string): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
}

/** Headers for `body`, signed with `secret` (throws if it is unusable). `now` is Unix seconds (tests move it). */
export function sign(
  body: string,
  secret: string,
  options: { id?: string; now?: number } = {},
): Record<string, string> {
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = String(options.now ?? Math.floor(Date.now() / 1000));
  const signature = hmac(webhookSecretKey(secret), id, timestamp, body).toString('base64');
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

/** What `verify` vouches for: the message id and its signed timestamp (Unix seconds). */
export interface VerifiedMessage {
  id: string;
  timestamp: number;
}

/**
 * Accepts the request when any `v1` signature in the header matches any of `secrets`,
 * and the timestamp is within ±5 minutes of `now`. Throws `SignatureError` otherwise.
 * A secret whose key `checkWebhookSecret` refuses is never used, whatever the caller checked.
 * Whether the id was seen before is the caller's concern (see lib/replay).
 */
export function verify(
  headers: { get(name: string): string | null | undefined },
  body: string,
  secrets: readonly string[],
  now: number = Math.floor(Date.now() / 1000),
): VerifiedMessage {
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
  const keys = secrets.flatMap((secret) => {
    const checked = checkWebhookSecret(secret);
    return 'key' in checked ? [checked.key] : [];
  });
  if (keys.length === 0) throw new SignatureError('this cluster has no usable secret to verify with');
  for (const key of keys) {
    const expected = hmac(key, id, timestamp, body);
    // Every candidate is compared in constant time; lengths differ only for garbage input.
    if (offered.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected))) return { id, timestamp: Number(timestamp) };
  }
  throw new SignatureError('webhook-signature does not match the body for any of this cluster\'s secrets');
}
