import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkWebhookSecret, secretFingerprint, sign, SignatureError, verify, WebhookSecretSchema, webhookSecretKey } from '../../lib/contract/index.js';

const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
const now = 1_800_000_000;
const headersOf = (h: Record<string, string>) => new Headers(h);

describe('Standard Webhooks signing', () => {
  it('signed body -> verifies, returning the id and the signed timestamp', () => {
    const headers = sign('{"items":[]}', secret, { id: 'msg_1', now });
    expect(verify(headersOf(headers), '{"items":[]}', [secret], now)).toEqual({ id: 'msg_1', timestamp: now, fingerprint: secretFingerprint(secret) });
  });

  it('known vector from the Standard Webhooks spec -> same signature', () => {
    // Vector from the reference implementation's test suite.
    const specSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const headers = sign('{"test": 2432232314}', specSecret, { id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', now: 1614265330 });
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('one of several rotated secrets -> verifies', () => {
    const headers = sign('body', secret, { now });
    const old = 'whsec_' + Buffer.from('old-secret-old-secret-old-secret').toString('base64');
    expect(() => verify(headersOf(headers), 'body', [old, secret], now)).not.toThrow();
  });

  it('tampered body -> SignatureError', () => {
    const headers = sign('body', secret, { now });
    expect(() => verify(headersOf(headers), 'body!', [secret], now)).toThrow(SignatureError);
  });

  it('timestamp 301 s old -> refused, naming the age', () => {
    const headers = sign('body', secret, { now: now - 301 });
    expect(() => verify(headersOf(headers), 'body', [secret], now)).toThrow(/301 s old/);
  });

  it('timestamp 301 s in the future -> refused', () => {
    const headers = sign('body', secret, { now: now + 301 });
    expect(() => verify(headersOf(headers), 'body', [secret], now)).toThrow(/in the future/);
  });

  it('timestamp 300 s old -> still accepted', () => {
    const headers = sign('body', secret, { now: now - 300 });
    expect(() => verify(headersOf(headers), 'body', [secret], now)).not.toThrow();
  });

  it('missing headers -> refused, naming them', () => {
    expect(() => verify(headersOf({}), 'body', [secret], now)).toThrow(/webhook-id, webhook-timestamp, webhook-signature/);
  });

  it('signature of another scheme only -> refused', () => {
    const headers = { ...sign('body', secret, { now }), 'webhook-signature': 'v1a,abc' };
    expect(() => verify(headersOf(headers), 'body', [secret], now)).toThrow(/no v1 signature/);
  });

  it('several signatures, one valid -> verifies', () => {
    const good = sign('body', secret, { id: 'm', now });
    const headers = { ...good, 'webhook-signature': `v1,AAAA ${good['webhook-signature']}` };
    expect(() => verify(headersOf(headers), 'body', [secret], now)).not.toThrow();
  });
});

describe('webhook secrets: one rule, a key of 24–64 bytes', () => {
  const b64 = (n: number) => 'whsec_' + Buffer.alloc(n, 0xab).toString('base64');
  const raw = (n: number) => 'k'.repeat(n);

  it.each([
    ['whsec_ + 24 bytes', b64(24), 24],
    ['whsec_ + 64 bytes', b64(64), 64],
    ['the spec\'s example secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 24],
    ['raw UTF-8, 24 bytes', raw(24), 24],
    ['raw UTF-8, 64 bytes', raw(64), 64],
  ])('%s -> accepted, key of %i bytes', (_name, value, bytes) => {
    expect(webhookSecretKey(value)).toHaveLength(bytes as number);
    expect(WebhookSecretSchema.safeParse(value).success).toBe(true);
  });

  it.each([
    ['whsec_ + non-base64 characters (decodes to 0 bytes)', 'whsec_!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!', /not canonical base64/],
    ['whsec_ alone', 'whsec_', /0 bytes/],
    ['whsec_ + 23 bytes', b64(23), /23 bytes/],
    ['whsec_ + 65 bytes', b64(65), /65 bytes/],
    ['whsec_ + unpadded base64', b64(25).replace(/=+$/, ''), /not canonical base64/],
    ['whsec_ + base64url', 'whsec_' + Buffer.alloc(30, 0xfb).toString('base64url'), /not canonical base64/],
    ['whsec_ + base64 with a space', b64(24).slice(0, 12) + ' ' + b64(24).slice(12), /not canonical base64/],
    ['raw UTF-8, 23 bytes', raw(23), /23 bytes/],
    ['raw UTF-8, 65 bytes', raw(65), /65 bytes/],
    ['empty', '', /0 bytes/],
  ])('%s -> refused, saying why without quoting it', (_name, value, why) => {
    const checked = checkWebhookSecret(value);
    expect(checked).toEqual({ problem: expect.stringMatching(why) });
    if (value.length > 6) expect((checked as { problem: string }).problem).not.toContain(value.slice(6));
    expect(() => webhookSecretKey(value)).toThrow(why);
    expect(WebhookSecretSchema.safeParse(value).success).toBe(false);
  });

  it('sign with an unusable secret -> throws; nothing is ever signed with an empty key', () => {
    expect(() => sign('body', 'whsec_!!!!!!!!', { now })).toThrow(/unusable webhook secret/);
  });

  it('a request signed with an empty HMAC key -> never accepted, whatever secrets the cluster has', () => {
    const id = 'msg_empty';
    const signature = createHmac('sha256', Buffer.alloc(0)).update(`${id}.${now}.body`).digest('base64');
    const headers = headersOf({ 'webhook-id': id, 'webhook-timestamp': String(now), 'webhook-signature': `v1,${signature}` });
    // A registration whose secret decodes to zero bytes: verify refuses to use it at all.
    expect(() => verify(headers, 'body', ['whsec_!!!!!!!!!!!!!!!!!!!!!!!!'], now)).toThrow(/no usable secret/);
    expect(() => verify(headers, 'body', ['whsec_!!!!!!!!!!!!!!!!!!!!!!!!', secret], now)).toThrow(/does not match/);
    expect(() => verify(headers, 'body', [secret], now)).toThrow(SignatureError);
  });

  it('a short key in the list -> skipped; a valid key beside it still verifies', () => {
    const short = 'whsec_' + Buffer.alloc(8, 1).toString('base64');
    const shortSigned = createHmac('sha256', Buffer.alloc(8, 1)).update(`m.${now}.body`).digest('base64');
    const headers = headersOf({ 'webhook-id': 'm', 'webhook-timestamp': String(now), 'webhook-signature': `v1,${shortSigned}` });
    expect(() => verify(headers, 'body', [short, secret], now)).toThrow(SignatureError);
    expect(() => verify(headersOf(sign('body', secret, { now })), 'body', [short, secret], now)).not.toThrow();
  });
});
