/**
 * A stand-in for the backend: a node:http server on 127.0.0.1 that verifies each request's
 * Standard Webhooks signature with the contract's `verify`, records the items, and answers
 * with whatever the test scripts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ReconcileRequestSchema, itemKey, verify, type Item, type Result } from '../../lib/contract/index.js';

export type Answer =
  | { status: number; body?: unknown }
  | { results: Result[] };

export interface FakeBackend {
  url: string;
  port: number;
  /** Every item of every accepted (signed, valid) request, in arrival order — volume reports aside. */
  items: Item[];
  /** The volume reports (sent on every resync), kept apart so item assertions are not about them. */
  reports: Extract<Item, { kind: 'VolumeReport' }>[];
  /** Requests refused because the signature did not verify or the body named another cluster. */
  refused: number;
  /** Checks answered (accepted or refused), apart from `statuses`. */
  checks: number;
  /** Status of every reconcile request answered. */
  statuses: number[];
  /** Scripts the answer to a verified request's items (volume reports aside, always done). Default: every item done, no writes. */
  answer: (items: Item[]) => Answer;
  /** What a volume report's answer says of the next (the contract's `reportWithinSeconds`); undefined: nothing, every resync. */
  reportWithinSeconds: number | undefined;
  secrets: string[];
  close(): Promise<void>;
}

/** The only cluster the fake backend serves. */
export const CLUSTER_ID = 'test-cluster';

export const done = (item: Item, writes: Result['writes'] = []): Result => ({ key: itemKey(item), outcome: 'done', writes });

export async function startFakeBackend(options: { secrets: string[]; port?: number }): Promise<FakeBackend> {
  const backend: FakeBackend = {
    url: '',
    port: 0,
    items: [],
    reports: [],
    refused: 0,
    checks: 0,
    statuses: [],
    answer: (items) => ({ results: items.map((item) => done(item)) }),
    reportWithinSeconds: undefined,
    secrets: options.secrets,
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const reply = (status: number, payload: unknown) => {
        backend.statuses.push(status);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      };
      // The check each replica makes before it is ready (lib/contract/check.ts): the secret
      // verified, nothing done; apart from the reconcile answers the tests count.
      if (req.method === 'POST' && req.url === `/v1/clusters/${CLUSTER_ID}/check`) {
        backend.checks++;
        let accepted = true;
        try {
          verify({ get: (name) => req.headers[name] as string | undefined }, body, backend.secrets);
        } catch {
          accepted = false;
        }
        const [status, payload] = accepted ? [200, { clusterId: CLUSTER_ID, accepted: true }] : [401, { error: { code: 'bad_signature', message: 'no secret of the registration signed it' } }];
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
        return;
      }
      if (req.method !== 'POST' || req.url !== `/v1/clusters/${CLUSTER_ID}/reconcile`) {
        reply(404, { error: { code: 'NotFound', message: `${req.method} ${req.url}` } });
        return;
      }
      try {
        verify({ get: (name) => req.headers[name] as string | undefined }, body, backend.secrets);
      } catch (err) {
        backend.refused++;
        reply(401, { error: { code: 'Unauthorized', message: (err as Error).message } });
        return;
      }
      const parsed = ReconcileRequestSchema.safeParse(JSON.parse(body));
      if (!parsed.success) {
        reply(400, { error: { code: 'BadRequest', message: parsed.error.message } });
        return;
      }
      // As the backend does: the signed body must name the cluster of the path.
      if (parsed.data.clusterId !== CLUSTER_ID) {
        backend.refused++;
        reply(401, { error: { code: 'cluster_mismatch', message: `body is for "${parsed.data.clusterId}", path for "${CLUSTER_ID}"` } });
        return;
      }
      const items = parsed.data.items.filter((item) => item.kind !== 'VolumeReport');
      const reports = parsed.data.items.filter((item) => item.kind === 'VolumeReport');
      backend.items.push(...items);
      backend.reports.push(...reports);
      // The scripted answer is about the items; a volume report is simply done.
      const answer = items.length > 0 ? backend.answer(items) : { results: [] };
      const within = backend.reportWithinSeconds;
      const reported = reports.map((r) => ({ ...done(r), ...(within !== undefined && { reportWithinSeconds: within }) }));
      if ('results' in answer) reply(200, { results: [...answer.results, ...reported] });
      else reply(answer.status, answer.body ?? { error: { code: 'Unavailable', message: 'scripted failure' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  backend.port = (server.address() as AddressInfo).port;
  backend.url = `http://127.0.0.1:${backend.port}`;
  backend.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return backend;
}

/** Polls `check` until it returns truthy (or throws for the last time). */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw lastError instanceof Error ? lastError : new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
