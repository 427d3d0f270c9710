import { describe, expect, it } from 'vitest';
import { sign, SignatureError, verify } from '../../lib/contract/index.js';

const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
const now = 1_800_000_000;
const headersOf = (h: Record<string, string>) => new Headers(h);

describe('Standard Webhooks signing', () => {
  it('signed body -> verifies', () => {
    const headers = sign('{"items":[]}', secret, { id: 'msg_1', now });
    expect(() => verify(headersOf(headers), '{"items":[]}', [secret], now)).not.toThrow();
  });

  it('known vector from the Standard Webhooks spec -> same signature', () => {
    // Vector from the reference implementation's test suite.
    const specSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const headers = sign('{"test": 2432232314}', specSecret, { id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', now: 1614265330 });
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('one of several rotated secrets -> verifies', () => {
    const headers = sign('body', secret, { now });
    expect(() => verify(headersOf(headers), 'body', ['whsec_b2xkc2VjcmV0b2xkc2VjcmV0', secret], now)).not.toThrow();
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
