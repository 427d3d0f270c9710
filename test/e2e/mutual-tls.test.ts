/**
 * The backend behind mutual TLS, as API Gateway's custom domain with a truststore puts it: a
 * local https front that requires a client certificate of its CA and passes each request to
 * the local stack's backend. A forwarder without a certificate is refused at the handshake
 * (its log says so, nothing reaches the backend); with the files of a kubernetes.io/tls
 * Secret it provisions; the files rotated on disk, the new certificate is shown.
 */
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startForwarder, createJsonLogger, type Forwarder, type ForwarderConfigInput } from '../../lib/forwarder/index.js';
import { listen } from '../../lib/http/index.js';
import { kubeConfigFor } from '../../lib/kube/index.js';
import { createPki, type Pki } from '../forwarder/pki.js';
import { createClaim, createNamespace } from './support/kube.js';
import { waitClaimBound, type ScenarioContext } from './support/scenarios.js';
import { IMMEDIATE_CLASS, startScenarioStack, type E2eStack } from './support/stack.js';
import { waitFor } from './support/wait.js';

let stack: E2eStack;
let ctx: ScenarioContext;
let pki: Pki;
let frontUrl: string;
let closeFront: () => Promise<void>;
/** What passed the front: the client certificate's CN of each request handed to the backend. */
const passed: string[] = [];
const forwarders: Forwarder[] = [];

beforeAll(async () => {
  pki = createPki();
  ({ stack, ctx } = await startScenarioStack({ forwarder: false, immediateClass: true }));
  const backend = new URL(stack.urls.backend);
  const front = createHttpsServer({ ...pki.server, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    passed.push(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN));
    const upstream = httpRequest({ host: backend.hostname, port: backend.port, method: req.method, path: req.url, headers: { ...req.headers, host: backend.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  ({ close: closeFront } = await listen(front, 0, '127.0.0.1'));
  const address = front.address();
  frontUrl = `https://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}, 120_000);

afterAll(async () => {
  for (const forwarder of forwarders) await forwarder.stop();
  await closeFront?.();
  await stack?.stop();
  pki?.remove();
});

async function forwarder(tls: Pick<ForwarderConfigInput, 'caFile' | 'clientCertFile' | 'clientKeyFile'>, lines: string[]): Promise<Forwarder> {
  const started = await startForwarder(
    {
      apiUrl: frontUrl,
      clusterId: stack.clusterId,
      secret: stack.secret,
      port: 0,
      listenHost: '127.0.0.1',
      resyncSeconds: 1,
      backoffInitialMs: 100,
      backoffMaxMs: 500,
      secretPollMs: 50,
      ...tls,
    },
    { kubeConfig: kubeConfigFor({ server: stack.urls.kube }), logger: createJsonLogger({ level: 'debug', write: (line) => void lines.push(line) }) },
  );
  forwarders.push(started);
  return started;
}

describe('a backend behind mutual TLS', () => {
  it('no client certificate -> refused at the handshake, the log naming the variables, nothing passes the front; the Secret\'s files -> Bound; rotated -> the new certificate shown', async () => {
    await createNamespace(stack.kube, 'mtls');

    // Refused: the CA trusted, no certificate shown.
    const refusedLog: string[] = [];
    const without = await forwarder({ caFile: pki.caFile }, refusedLog);
    await createClaim(stack.kube, 'mtls', 'refused', { storageClassName: IMMEDIATE_CLASS });
    await waitFor(
      () => refusedLog.join(''),
      (log) => /backend refused the TLS handshake.*VOLHOOK_CLIENT_CERT_FILE and VOLHOOK_CLIENT_KEY_FILE/.test(log),
      { timeoutMs: 30_000, what: 'the forwarder to log the refused handshake' },
    );
    expect(passed).toEqual([]);
    await without.stop();

    // The control: the files of a kubernetes.io/tls Secret (tls.crt, tls.key) as mounted.
    const first = pki.client('cluster-before');
    const files = { caFile: pki.caFile, clientCertFile: join(pki.dir, 'tls.crt'), clientKeyFile: join(pki.dir, 'tls.key') };
    writeFileSync(files.clientCertFile, first.cert);
    writeFileSync(files.clientKeyFile, first.key);
    const withFiles = await forwarder(files, []);
    const pvc = await waitClaimBound(ctx, 'mtls', 'refused', 90_000);
    expect(pvc.spec?.volumeName).toMatch(/^pvc-/);
    expect(passed.length).toBeGreaterThan(0);
    expect(new Set(passed)).toEqual(new Set(['cluster-before']));

    // Rotated on disk: the next requests show the new certificate. A forwarder at rest sends its
    // report only when the backend needs it; each resync asked for here sends it.
    const next = pki.client('cluster-after');
    writeFileSync(files.clientCertFile, next.cert);
    writeFileSync(files.clientKeyFile, next.key);
    await waitFor(
      () => {
        withFiles.resync();
        return passed.at(-1);
      },
      (cn) => cn === 'cluster-after',
      { timeoutMs: 30_000, what: 'a request with the rotated certificate' },
    );
    await createClaim(stack.kube, 'mtls', 'after-rotation', { storageClassName: IMMEDIATE_CLASS });
    await waitClaimBound(ctx, 'mtls', 'after-rotation', 90_000);
  }, 240_000);
});
