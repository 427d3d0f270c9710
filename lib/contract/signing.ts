/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the forwarder signs each
 * request body with its cluster's secret; the backend verifies before it parses anything.
 *
 * Secrets are `whsec_<base64 key>` as the spec writes them; a secret without the prefix is
 * used as raw UTF-8 bytes. Either way the key must be 24–64 bytes, the spec's range: one rule,
 * `checkWebhookSecret`, used by the registry, the cluster CLI, the forwarder and `verify`.
 * Several secrets may be accepted at once so that a cluster's secret can be rotated without
 * downtime.
 *
 * The spec's `v1` signs `id.timestamp.body`, no other header. From contract 2 on (version.ts)
 * the version headers are signed too, by a second signature in the same header, `v1h`: HMAC
 * over `id.timestamp.contract=<n>;forwarder=<version>.body`, same key. Beside it the forwarder
 * keeps the `v1` signature: a 0.1.0 backend checks `v1` only and ignores the rest, so it reads a
 * contract-2 request (same body) as the contract-1 request it is. A backend here requires the
 * `v1h` signature whenever version headers are present, so they cannot be changed or added
 * without the secret. Removing them (and `v1h`) leaves a valid contract-1 request of the same
 * body, which is what it would say anyway; a contract whose body differs is not in
 * `READ_AS_HEADERLESS` (version.ts) and is sent with `v1h` alone.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import * as z from 'zod/mini';
import { deferred } from './deferred.js';
import { READ_AS_HEADERLESS, versionHeaders, VersionHeaders, type ForwarderVersions } from './version.js';
import './zod-messages.js';

export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

export const SignatureHeaders = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * Which secret a forwarder signs with, safe to show (metrics, readiness, the CLI): the first 48
 * bits of the secret's SHA-256. The CLI prints it for each secret it adds, the forwarder for
 * the one it signs with, so a rotation can be seen reaching every replica.
 */
export function secretFingerprint(secret: string): string {
  return `sha256:${createHash('sha256').update(secret).digest('hex').slice(0, 12)}`;
}
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

/** The signature schemes: the spec's `v1`, and `v1h`, which covers the version headers too. */
export const SignatureSchemes = { body: 'v1', withVersions: 'v1h' } as const;

function hmac(key: Buffer, id: string, timestamp: string, body: string, versions?: ForwarderVersions): Buffer {
  const signed = versions ? `${id}.${timestamp}.contract=${versions.contract};forwarder=${versions.forwarderVersion}.${body}` : `${id}.${timestamp}.${body}`;
  return createHmac('sha256', key).update(signed).digest();
}

/**
 * Headers for `body`, signed with `secret` (throws if it is unusable). `now` is Unix seconds
 * (tests move it). With `versions`: the version headers too, and a `v1h` signature of them —
 * beside the `v1` one for a contract a 0.1.0 backend reads as its own (`READ_AS_HEADERLESS`),
 * alone for any other.
 */
export function sign(
  body: string,
  secret: string,
  options: { id?: string; now?: number; versions?: ForwarderVersions } = {},
): Record<string, string> {
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = String(options.now ?? Math.floor(Date.now() / 1000));
  const key = webhookSecretKey(secret);
  const signature = `${SignatureSchemes.body},${hmac(key, id, timestamp, body).toString('base64')}`;
  const { versions } = options;
  if (!versions) return { [SignatureHeaders.id]: id, [SignatureHeaders.timestamp]: timestamp, [SignatureHeaders.signature]: signature };
  const covering = `${SignatureSchemes.withVersions},${hmac(key, id, timestamp, body, versions).toString('base64')}`;
  return {
    [SignatureHeaders.id]: id,
    [SignatureHeaders.timestamp]: timestamp,
    [SignatureHeaders.signature]: READ_AS_HEADERLESS.includes(versions.contract) ? `${signature} ${covering}` : covering,
    ...versionHeaders(versions),
  };
}

/** Why a request was refused; the message is safe to return to the caller. */
export class SignatureError extends Error {
  override readonly name = 'SignatureError';
}

/** What `verify` vouches for: the message id, its signed timestamp (Unix seconds), and which secret signed it. */
export interface VerifiedMessage {
  id: string;
  timestamp: number;
  /** `secretFingerprint` of the secret whose signature matched. */
  fingerprint: string;
}

/**
 * Accepts the request when any `v1` signature in the header matches any of `secrets`,
 * and the timestamp is within ±5 minutes of `now`. Throws `SignatureError` otherwise.
 * With `versions` (the request's version headers, read by version.ts) only a `v1h` signature
 * of them counts: a `v1` one does not cover them.
 * A secret whose key `checkWebhookSecret` refuses is never used, whatever the caller checked.
 * Whether the id was seen before is the caller's concern (see lib/replay).
 */
export function verify(
  headers: { get(name: string): string | null | undefined },
  body: string,
  secrets: readonly string[],
  now: number = Math.floor(Date.now() / 1000),
  options: { versions?: ForwarderVersions } = {},
): VerifiedMessage {
  const { versions } = options;
  const scheme = versions ? SignatureSchemes.withVersions : SignatureSchemes.body;
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
    .filter((part) => part.startsWith(`${scheme},`))
    .map((part) => Buffer.from(part.slice(scheme.length + 1), 'base64'));
  if (offered.length === 0) {
    throw new SignatureError(
      versions
        ? `webhook-signature has no ${scheme} signature, which the version headers (${Object.values(VersionHeaders).join(', ')}) need: a v1 signature does not cover them`
        : `webhook-signature has no ${scheme} signature`,
    );
  }
  const keys = secrets.flatMap((secret) => {
    const checked = checkWebhookSecret(secret);
    return 'key' in checked ? [{ key: checked.key, secret }] : [];
  });
  if (keys.length === 0) throw new SignatureError('this cluster has no usable secret to verify with');
  for (const { key, secret } of keys) {
    const expected = hmac(key, id, timestamp, body, versions);
    // Every candidate is compared in constant time; lengths differ only for garbage input.
    if (offered.some((sig) => sig.length === expected.length && timingSafeEqual(sig, expected))) return { id, timestamp: Number(timestamp), fingerprint: secretFingerprint(secret) };
  }
  throw new SignatureError(
    versions
      ? "webhook-signature's v1h signature does not match the body and version headers for any of this cluster's secrets"
      : "webhook-signature does not match the body for any of this cluster's secrets",
  );
}
