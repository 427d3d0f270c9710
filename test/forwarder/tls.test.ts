/** tlsProblem and tlsMaterial (lib/forwarder/tls.ts): pure, no sockets. */
import { rootCertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { tlsMaterial, tlsProblem } from '../../lib/forwarder/tls.js';

const failure = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('tlsProblem', () => {
  it.each([
    ['TLS 1.3: the server asks for a certificate none was shown', failure('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED'), /client certificate .*VOLHOOK_CLIENT_CERT_FILE and VOLHOOK_CLIENT_KEY_FILE/],
    ['TLS 1.2: the handshake refused', failure('ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE'), /client certificate/],
    ['the certificate shown is of a CA the server does not know', failure('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA'), /client certificate/],
    ['the backend\'s certificate of a private CA', failure('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), /backend's certificate is not trusted .*VOLHOOK_CA_FILE/],
    ['a self-signed backend', failure('DEPTH_ZERO_SELF_SIGNED_CERT'), /VOLHOOK_CA_FILE/],
    ['a certificate for another host', failure('ERR_TLS_CERT_ALTNAME_INVALID'), /VOLHOOK_API_URL's host name/],
  ])('%s -> said in the operator\'s words', (_situation, err, expected) => {
    expect(tlsProblem(err)).toMatch(expected);
  });

  it.each([
    ['a refused connection', failure('ECONNREFUSED')],
    ['a reset', failure('ECONNRESET', 'socket hang up')],
    ['not an error at all', 'boom'],
  ])('%s -> not a TLS problem (left as it is)', (_situation, err) => {
    expect(tlsProblem(err)).toBeUndefined();
  });
});

describe('tlsMaterial', () => {
  it('a CA bundle -> added to the public roots; a certificate with its key -> both; neither -> nothing', () => {
    const ca = '-----BEGIN CERTIFICATE-----\nprivate\n-----END CERTIFICATE-----\n';
    expect(tlsMaterial({ ca }).ca).toEqual([...rootCertificates, ca]);
    expect(tlsMaterial({ cert: 'c', key: 'k' })).toEqual({ cert: 'c', key: 'k' });
    expect(tlsMaterial({ cert: 'c' })).toEqual({});
    expect(tlsMaterial({})).toEqual({});
  });
});
