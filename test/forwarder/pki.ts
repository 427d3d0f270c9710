/**
 * A throwaway PKI for the TLS tests, made with the openssl command line: a CA, a server
 * certificate for 127.0.0.1 and localhost, and client certificates, all signed by that CA
 * (P-256 keys: fast to make). Files in a temporary directory; PEM texts returned.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pem {
  cert: string;
  key: string;
}

export interface Pki {
  dir: string;
  /** The CA's certificate (PEM) and its file. */
  ca: string;
  caFile: string;
  server: Pem;
  /** A new client certificate signed by this CA, its subject CN `cn`. */
  client(cn: string): Pem;
  remove(): void;
}

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Throws, saying so, when openssl is not on PATH: these tests need it. */
export function createPki(name = 'volhook-test-ca'): Pki {
  try {
    openssl(['version'], tmpdir());
  } catch (err) {
    throw new Error('the TLS tests make their certificates with the openssl command line, not found on PATH', { cause: err });
  }
  const dir = mkdtempSync(join(tmpdir(), 'volhook-pki-'));
  openssl(['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  let serial = 0;
  const leaf = (cn: string, extensions: string): Pem => {
    const base = `leaf-${++serial}`;
    writeFileSync(join(dir, `${base}.ext`), extensions);
    openssl(['req', ...EC, '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${cn}`], dir);
    openssl(['x509', '-req', '-in', `${base}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', String(1000 + serial), '-out', `${base}.crt`, '-days', '2', '-extfile', `${base}.ext`], dir);
    return { cert: readFileSync(join(dir, `${base}.crt`), 'utf8'), key: readFileSync(join(dir, `${base}.key`), 'utf8') };
  };
  return {
    dir,
    ca: readFileSync(join(dir, 'ca.crt'), 'utf8'),
    caFile: join(dir, 'ca.crt'),
    server: leaf('127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'),
    client: (cn) => leaf(cn, 'extendedKeyUsage=clientAuth\n'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
