/**
 * The backend's HTTP API, one hono app for every runtime: `@hono/node-server` locally,
 * `hono/aws-lambda` behind API Gateway. Everything it needs comes in as dependencies, so
 * tests run it with a mocked EC2 client and an in-memory registry.
 */
import type { Context } from 'hono';
import { Hono } from 'hono/tiny';
import { bodyLimit } from 'hono/body-limit';
import type * as z from 'zod/mini';
import {
  ACCEPT_ENCODING_HEADER,
  CHECK_ROUTE,
  decodeRequestBody,
  GZIP,
  NO_ROUTE_CODE,
  PROVISIONER_MISMATCH_CODE,
  CheckRequestSchema,
  SERVED_FEATURES,
  type CheckResponse,
  contractRefusal,
  contractVerdict,
  MAX_REQUEST_BYTES,
  readRequestVersions,
  ReconcileRequestSchema,
  SignatureError,
  SUPPORTED_CONTRACTS,
  verify,
  type Item,
  type RequestVersions,
  type VerifiedMessage,
  type ReconcileResponse,
  type Result,
  type Write,
} from '../contract/index.js';
import { Ec2CallStats, type Ec2Gateway, type Ec2Observer } from '../ec2/index.js';
import type { ReconcileContext } from '../reconcile/index.js';
import { ClusterIdSchema, RegistrationError, RegistryMissingError, servedProvisioner, type ClusterRegistration, type ClusterRegistry } from '../registry/index.js';
import { createMemoryReplayStore, replayExpiry, replayKey, type ReplayStore } from '../replay/index.js';
import { createMemoryReportStore, noteRefusal, noteVerified, type ReportStore } from '../reports/index.js';
import { correlationOf, REQUEST_ID_HEADER, type Correlation } from './correlation.js';
import { ApiError, ContractRefusedError, invalidRequest } from './errors.js';

/** Larger bodies are refused with 413 before they are read in full. */
export const MAX_BODY_BYTES = MAX_REQUEST_BYTES;
/** API Gateway cuts a request at 30 s; EC2 work stops here so the answer always gets out. */
export const RECONCILE_BUDGET_MS = 20_000;

export interface AppDependencies {
  registry: ClusterRegistry;
  /** The clusters' volume reports, for the audit; default: in this process's memory. */
  reports?: ReportStore;
  /** Webhook ids already accepted; default: in this process's memory. */
  replay?: ReplayStore;
  /**
   * The EC2 gateway for one request of one cluster; `deadline` is epoch ms; `observer` is told
   * of the request's EC2 calls and token decisions (for `onEc2Calls`).
   */
  gatewayFor(registration: ClusterRegistration, deadline: number, observer: Ec2Observer): Ec2Gateway;
  /** Called once per reconcile request with its EC2 calls and tokens per action: metrics hang here. */
  onEc2Calls?(clusterId: string, stats: Ec2CallStats): void;
  /** Applies writes for clusters registered with `writeBack: direct`. */
  applyDirect?(registration: ClusterRegistration, writes: Write[]): Promise<void>;
  driverName?: string;
  /** Epoch ms; tests move it to check signature timestamps. */
  now?(): number;
  /** A simulator's time scale: ReconcileContext's `ec2TimeScale`. Never set against AWS. */
  ec2TimeScale?: number;
  /** A bench's forwarders resyncing faster than real time: ReconcileContext's `reportTimeScale`. Never set deployed. */
  reportTimeScale?: number;
  /** Called once per item after reconciling: logs and metrics hang here. */
  onResult?(clusterId: string, item: Item, result: Result): void;
  /**
   * Told the contract and forwarder version of each reconcile request: a served one once its
   * signature is verified, a refused one at its refusal (unverified: a contract not served
   * cannot be verified, so its cluster is only what the path says). The versions each cluster's
   * forwarders run, for deciding a backend rollback (docs/upgrade.md).
   */
  onContract?(clusterId: string, seen: ContractSeen): void;
  /**
   * Told of every error an operator must see (the item is requeued either way): `reconcile`,
   * an exception in a reconciler that is not an EC2 error — a bug, or an outage of something
   * other than EC2; `writeBack`, writes the backend could not apply to a `writeBack: direct`
   * cluster. Default: one JSON line at level ERROR on stderr, with the stack. `correlation`
   * holds the request's id (lib/app/correlation.ts), which every error line carries.
   */
  onError?(clusterId: string, itemKey: string, error: unknown, stage: ErrorStage, correlation: Correlation): void;
  maxBodyBytes?: number;
}

/** A reconcile request's versions, as `onContract` is told them. */
export interface ContractSeen {
  contract: number;
  /** Absent for contract 1 (0.1.0's forwarder sends no version). */
  forwarderVersion?: string;
  served: boolean;
}

/** Where an error the operator must see happened: in a reconciler, or applying its writes. */
export type ErrorStage = 'reconcile' | 'writeBack';

/** The log message of each error stage. */
export const ERROR_MESSAGES: Readonly<Record<ErrorStage, string>> = {
  reconcile: 'reconciler error',
  writeBack: 'writes could not be applied',
};

export function createApp(deps: AppDependencies): Hono {
  const now = deps.now ?? Date.now;
  if (deps.ec2TimeScale !== undefined && !(deps.ec2TimeScale > 0 && Number.isFinite(deps.ec2TimeScale))) {
    throw new Error(`ec2TimeScale must be a positive number, got ${deps.ec2TimeScale}`);
  }
  if (deps.reportTimeScale !== undefined && !(deps.reportTimeScale > 0 && Number.isFinite(deps.reportTimeScale))) {
    throw new Error(`reportTimeScale must be a positive number, got ${deps.reportTimeScale}`);
  }
  const onError = deps.onError ?? logError;
  const maxBodyBytes = deps.maxBodyBytes ?? MAX_BODY_BYTES;
  const replay = deps.replay ?? createMemoryReplayStore();
  const reports = deps.reports ?? createMemoryReportStore();
  const app = new Hono();
  /** Each request's correlation, found once by the first middleware. */
  const correlations = new WeakMap<Request, Correlation>();
  const correlationFor = (c: { req: { path: string; raw: Request }; env: unknown }): Correlation => {
    let found = correlations.get(c.req.raw);
    if (!found) correlations.set(c.req.raw, (found = correlationOf({ path: c.req.path, headers: c.req.raw.headers, env: c.env })));
    return found;
  };

  app.use(async (c, next) => {
    c.header(REQUEST_ID_HEADER, correlationFor(c).requestId);
    // RFC 7694: the codings request bodies may come in (lib/contract/body-encoding.ts).
    c.header(ACCEPT_ENCODING_HEADER, GZIP);
    await next();
  });

  app.onError(async (err, c) => {
    const correlation = correlationFor(c);
    const echo = { [REQUEST_ID_HEADER]: correlation.requestId, [ACCEPT_ENCODING_HEADER]: GZIP };
    // Which refusals count for the audit, and why: lib/reports/refusals.ts.
    await noteRefusal(reports, { path: c.req.path, status: err instanceof ApiError ? err.status : 500, code: err instanceof ApiError ? err.code : 'internal', at: now() });
    if (err instanceof ApiError) return c.json(err.toBody(), err.status, { ...err.headers(), ...echo });
    console.error(JSON.stringify({ level: 'ERROR', message: 'unhandled error', ...correlation, error: String(err?.stack ?? err) }));
    return c.json({ error: { code: 'internal', message: 'internal error' } }, 500, echo);
  });
  app.notFound((c) => c.json({ error: { code: NO_ROUTE_CODE, message: `no route for ${c.req.method} ${c.req.path}` } }, 404));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  const limitBody = bodyLimit({
    maxSize: maxBodyBytes,
    onError: () => {
      throw new ApiError(413, 'body_too_large', `request body exceeds ${maxBodyBytes} bytes`);
    },
  });

  /**
   * What every signed request goes through before anything is done for it: the cluster id, the
   * contract (first: before it is known to be served, nothing else of the request can be read
   * by its rules, its signature included), the registration, the signature, the webhook id
   * (recorded only once the signature is verified: a forged request cannot use up the id of a
   * genuine one), and the body's cluster, which is signed where the path is not.
   */
  async function verified<T extends { clusterId: string }>(c: Context, schema: z.ZodMiniType<T>) {
    const clusterId = c.req.param('clusterId') ?? '';
    if (!ClusterIdSchema.safeParse(clusterId).success) {
      throw new ApiError(400, 'bad_cluster_id', `"${clusterId}" is not a valid cluster id`);
    }
    const read = readRequestVersions(c.req.raw.headers);
    if ('problem' in read) throw new ApiError(400, 'bad_version_headers', read.problem);
    const { versions } = read;
    const verdict = contractVerdict(versions.contract, SUPPORTED_CONTRACTS);
    if (!verdict.served) {
      deps.onContract?.(clusterId, seenOf(versions, false));
      throw new ContractRefusedError(contractRefusal(versions, verdict.upgrade, SUPPORTED_CONTRACTS));
    }

    // Decoded before anything is looked up: a body that inflates past the bound is refused having cost nothing else.
    const decoded = decodeRequestBody(new Uint8Array(await c.req.arrayBuffer()), c.req.header('content-encoding'));
    if (!decoded.ok) throw new ApiError(decoded.status, decoded.code, decoded.message);
    const body = decoded.text;
    const registration = await lookUp(deps.registry, clusterId);
    const nowSeconds = Math.floor(now() / 1000);

    let message: VerifiedMessage;
    try {
      // Version headers are signed by `v1h`; a request without them, by `v1` (contract 1).
      message = verify(c.req.raw.headers, body, registration.secrets, nowSeconds, versions.forwarderVersion === undefined ? {} : { versions });
    } catch (err) {
      if (err instanceof SignatureError) throw new ApiError(401, 'bad_signature', err.message);
      throw err;
    }
    if (!(await replay.recordOnce(replayKey(clusterId, message.id), replayExpiry(message.timestamp), nowSeconds))) {
      throw new ApiError(409, 'replayed', `webhook-id "${message.id}" was already accepted for cluster "${clusterId}"; a replayed request is not acted on`);
    }
    deps.onContract?.(clusterId, seenOf(versions, true));
    // Which secret the cluster still signs with, for rotate-secret --finish (lib/reports/verified-by.ts).
    await noteVerified(reports, clusterId, message.fingerprint, now());

    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new ApiError(400, 'malformed_json', 'request body is not valid JSON');
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw invalidRequest(parsed.error);
    // A request signed for one cluster must not act on another's path, even when both were
    // registered with the same secret.
    if (parsed.data.clusterId !== clusterId) {
      throw new ApiError(401, 'cluster_mismatch', `the request body is signed for cluster "${parsed.data.clusterId}", but the path names cluster "${clusterId}"`);
    }
    return { clusterId, registration, message, request: parsed.data };
  }

  // A replica's proof, before it is ready, that the backend accepts it (its contract, its
  // registration, its secret): verified as a reconcile request is, and nothing done.
  app.post(CHECK_ROUTE, limitBody, async (c) => {
    const { clusterId, registration, request } = await verified(c, CheckRequestSchema);
    // What reconcile would refuse, the check refuses too.
    if (registration.writeBack === 'direct' && !deps.applyDirect) throw directUnsupported(registration);
    // Reconcile would answer every claim of this forwarder `failed` (OtherProvisioner): a
    // replica so configured is not ready, and its rollout stops there.
    const served = servedProvisioner(registration);
    if (request.provisioner !== undefined && request.provisioner !== served) {
      throw new ApiError(
        403,
        PROVISIONER_MISMATCH_CODE,
        `this forwarder serves provisioner "${request.provisioner}", but cluster "${clusterId}" is registered for "${served}": set the chart's provisioner and the registration's to the same name`,
      );
    }
    return c.json({ clusterId, accepted: true, serves: [...SERVED_FEATURES] } satisfies CheckResponse);
  });

  app.post(
    '/v1/clusters/:clusterId/reconcile',
    limitBody,
    async (c) => {
      // Started now, awaited only once the request is verified: on a cold start the reconcilers
      // load while the registry and replay look-ups wait on the network.
      const reconciler = loadReconcilers();
      const correlation = correlationFor(c);
      const { clusterId, registration, message, request } = await verified(c, ReconcileRequestSchema);

      const ec2Calls = new Ec2CallStats();
      const ctx: ReconcileContext = {
        clusterId,
        registration,
        // The gateway measures its deadline on the real clock, whatever `now` says.
        ec2: deps.gatewayFor(registration, Date.now() + RECONCILE_BUDGET_MS, ec2Calls),
        driverName: deps.driverName ?? 'ebs.csi.aws.com',
        // The cluster's registration names it (the chart's `provisioner`, registered the same).
        provisionerName: servedProvisioner(registration),
        now: () => new Date(now()),
        ...(deps.ec2TimeScale !== undefined && { ec2TimeScale: deps.ec2TimeScale }),
        ...(deps.reportTimeScale !== undefined && { reportTimeScale: deps.reportTimeScale }),
        signedAt: new Date(message.timestamp * 1000),
        reports,
        reportError: (itemKey, error) => onError(clusterId, itemKey, error, 'reconcile', correlation),
      };
      let results: Result[];
      try {
        results = await (await reconciler).reconcileItems(request.items, ctx);
      } finally {
        if (ec2Calls.actions.size > 0) deps.onEc2Calls?.(clusterId, ec2Calls);
      }
      if (registration.writeBack === 'direct') results = await applyDirectly(deps, registration, results, (key, err) => onError(clusterId, key, err, 'writeBack', correlation));
      request.items.forEach((item, i) => deps.onResult?.(clusterId, item, results[i]!));
      return c.json({ results } satisfies ReconcileResponse);
    },
  );

  return app;
}

/**
 * The reconcilers (with the StorageClass parameters and CSI migration they use) are the
 * largest part of the function's own code. Loaded on the first reconcile request, not at
 * import: a cold start does not compile them before it can answer, and `/healthz` or a refused
 * request never loads them (the function's bundle keeps them in a chunk of their own).
 */
let reconcilers: Promise<typeof import('../reconcile/index.js')> | undefined;
function loadReconcilers(): Promise<typeof import('../reconcile/index.js')> {
  const loading = (reconcilers ??= import('../reconcile/index.js'));
  // A request refused before it awaits this must not leave an unhandled rejection; a failed
  // load is tried again by the next request.
  loading.catch(() => {
    if (reconcilers === loading) reconcilers = undefined;
  });
  return loading;
}

function seenOf(versions: RequestVersions, served: boolean): ContractSeen {
  return { contract: versions.contract, ...(versions.forwarderVersion !== undefined && { forwarderVersion: versions.forwarderVersion }), served };
}

async function lookUp(registry: ClusterRegistry, clusterId: string): Promise<ClusterRegistration> {
  let registration: ClusterRegistration | undefined;
  try {
    registration = await registry.get(clusterId);
  } catch (err) {
    // A broken registration concerns that cluster only: refuse its requests, clearly.
    if (err instanceof RegistrationError) throw new ApiError(403, 'registration_invalid', err.message);
    // No registrations file at all: this backend is not set up yet, for every cluster alike.
    if (err instanceof RegistryMissingError) throw new ApiError(503, 'registry_missing', err.message);
    throw err;
  }
  if (!registration) throw new ApiError(404, 'unknown_cluster', `cluster "${clusterId}" is not registered`);
  return registration;
}

/**
 * `writeBack: direct`: the backend applies each result's writes itself and answers with none,
 * so the forwarder has nothing left to do (it applies whatever writes an answer holds, and
 * these hold none: the registration alone says who writes). A write that fails is reported
 * (`onError`, stage `writeBack`) and turns the item into a requeue, never `done`.
 */
async function applyDirectly(
  deps: AppDependencies,
  registration: ClusterRegistration,
  results: Result[],
  report: (itemKey: string, error: unknown) => void,
): Promise<Result[]> {
  const apply = deps.applyDirect;
  if (!apply) throw directUnsupported(registration);
  return Promise.all(
    results.map(async (result): Promise<Result> => {
      if (result.writes.length === 0) return result;
      try {
        await apply(registration, result.writes);
        return { ...result, writes: [] };
      } catch (err) {
        report(result.key, err);
        return {
          key: result.key,
          outcome: 'requeue',
          requeueAfterSeconds: 5,
          message: `applying writes to the cluster failed: ${err instanceof Error ? err.message : String(err)}`,
          writes: [],
        };
      }
    }),
  );
}

function directUnsupported(registration: ClusterRegistration): ApiError {
  return new ApiError(403, 'registration_invalid', `cluster "${registration.clusterId}" uses writeBack: direct, which this backend does not support`);
}

/** The default `onError`: one JSON line at level ERROR on stderr, with the stack. */
function logError(clusterId: string, itemKey: string, error: unknown, stage: ErrorStage, correlation: Correlation): void {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  console.error(JSON.stringify({ level: 'ERROR', message: ERROR_MESSAGES[stage], stage, requestId: correlation.requestId, clusterId, itemKey, error: detail }));
}
