/**
 * The TLS material of the backend requests: a CA bundle trusted besides the public roots, and
 * a client certificate with its key for a backend behind mutual TLS. From mounted files, each
 * re-read when it changes (as the signing secret, secret.ts), so a rotated Secret is shown
 * without a restart. A new material is a new object: http-fetch.ts builds a new agent for it.
 */
import { readFile } from 'node:fs/promises';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { Logger } from './logger.js';
import { watchFiles } from './watched-files.js';

/** What the https agent is given; empty when no file is configured. */
export interface TlsMaterial {
  ca?: string[];
  cert?: string;
  key?: string;
}

export interface TlsFiles {
  caFile?: string;
  clientCertFile?: string;
  clientKeyFile?: string;
}

export interface TlsSource {
  /** The material now; the same object until a file changes. */
  current(): TlsMaterial;
  /** Reads the files again now. */
  reload(): Promise<void>;
  close(): void;
}

/** The PEM texts as the agent takes them: the CA bundle added to Node's public roots. */
export function tlsMaterial(pem: { ca?: string; cert?: string; key?: string }): TlsMaterial {
  return {
    ...(pem.ca !== undefined ? { ca: [...rootCertificates, pem.ca] } : {}),
    ...(pem.cert !== undefined && pem.key !== undefined ? { cert: pem.cert, key: pem.key } : {}),
  };
}

/**
 * Opens the configured files. A file missing or unusable at start (not PEM, a key that is not
 * the certificate's) stops the start; on a later change it is logged and the previous material
 * kept — a Secret's certificate and key are swapped together, so the next change heals it.
 */
export async function openTls(files: TlsFiles, options: { pollMs: number; logger: Logger }): Promise<TlsSource> {
  const paths = [files.caFile, files.clientCertFile, files.clientKeyFile].filter((p): p is string => p !== undefined);
  const text = async (file: string | undefined) => (file === undefined ? undefined : readFile(file, 'utf8'));
  const read = async (): Promise<{ material: TlsMaterial; fingerprint: string }> => {
    const [ca, cert, key] = await Promise.all([text(files.caFile), text(files.clientCertFile), text(files.clientKeyFile)]);
    const material = tlsMaterial({ ca, cert, key });
    try {
      createSecureContext(material);
    } catch (err) {
      throw new Error(`unusable TLS files (${paths.join(', ')}): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return { material, fingerprint: JSON.stringify([ca, cert, key]) };
  };
  let now = await read();
  const reload = async () => {
    try {
      const next = await read();
      if (next.fingerprint === now.fingerprint) return;
      now = next;
      options.logger.info('TLS files reloaded; new connections use them', { files: paths });
    } catch (err) {
      options.logger.error('cannot re-read the TLS files; keeping the previous ones', { files: paths, err });
    }
  };
  const close = watchFiles(paths, options.pollMs, () => void reload());
  return { current: () => now.material, reload, close };
}

/**
 * A failed request's cause, in the operator's words when it is TLS: which side is not trusted
 * and the variable that fixes it. Undefined for any other failure.
 */
export function tlsProblem(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
  const message = err instanceof Error ? err.message : '';
  if (/CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE|BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN/i.test(`${code} ${message}`) && /ALERT/i.test(`${code} ${message}`)) {
    return `the backend refused the TLS handshake (${code || message}): it wants a client certificate it trusts; check VOLHOOK_CLIENT_CERT_FILE and VOLHOOK_CLIENT_KEY_FILE`;
  }
  if (/^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|ERR_TLS_CERT_ALTNAME_INVALID)$/.test(code)) {
    return `the backend's certificate is not trusted (${code}): give its CA in VOLHOOK_CA_FILE, or check VOLHOOK_API_URL's host name`;
  }
  return undefined;
}
