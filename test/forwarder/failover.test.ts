/**
 * Several backends: the sender moves a request to the next one when the one in use gives no
 * answer or a 5xx, never when it refuses; the choice comes back to the first URL once its check
 * is accepted again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ItemKeys } from '../../lib/contract/index.js';
import type { KubeClients } from '../../lib/kube/clients.js';
import { BackendRequestError, type FetchLike } from '../../lib/forwarder/backend-client.js';
import { backendUrls, configFromEnv, ConfigError } from '../../lib/forwarder/config.js';
import { BackendChoice, isUnavailability, startFailback } from '../../lib/forwarder/failover.js';
import { silentLogger } from '../../lib/forwarder/logger.js';
import { createMetrics } from '../../lib/forwarder/metrics.js';
import { buildVolumeReport, ReportTracker } from '../../lib/forwarder/report.js';
import { createBatchSender } from '../../lib/forwarder/sender.js';
import { makeApp, SECRET_C1 } from '../app/harness.js';

const PRIMARY = 'http://primary.invalid';
const STANDBY = 'http://standby.invalid';
const ownership = { provisioner: 'ebs.csi.aws.com', driver: 'ebs.csi.aws.com' };
const empty = { claims: () => [], volumes: () => [], attachments: () => [], csiNode: () => undefined, snapshotContents: () => [] };

type Answer = 'serve' | 'down' | 'timeout' | { status: number; code?: string };

/** Two backends, each answering as told; every request's backend recorded. */
function backendsAnswering(answers: Record<string, Answer>) {
  const { app } = makeApp({ now: () => Date.now() });
  const asked: string[] = [];
  const fetch: FetchLike = async (url, init) => {
    const base = new URL(url).origin.replace(/^http:\/\/(\w+)\.invalid$/, 'http://$1.invalid');
    asked.push(base);
    const answer = answers[base];
    if (answer === 'serve') return app.request(url.replace(base, 'http://backend.test'), init);
    if (answer === 'down') throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') });
    if (answer === 'timeout') throw Object.assign(new Error('timed out'), { name: 'TimeoutError' });
    if (answer === undefined) throw new Error(`no answer set for ${base}`);
    const body = answer.code === undefined ? 'an error page' : JSON.stringify({ error: { code: answer.code, message: 'refused' } });
    return new Response(body, { status: answer.status, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, asked };
}

function senderOver(fetch: FetchLike, backends: BackendChoice, switched: string[] = []) {
  const tracker = new ReportTracker();
  const send = createBatchSender({
    config: { apiUrl: PRIMARY, clusterId: 'c1', requestTimeoutMs: 5_000 },
    backends,
    onSwitch: (url) => switched.push(url),
    clients: {} as KubeClients,
    metrics: createMetrics({ queueDepth: () => 0, defaultMetrics: false }),
    logger: silentLogger,
    secret: { current: () => SECRET_C1, reload: async () => {}, close() {} },
    fetch,
    signal: new AbortController().signal,
    buildItem: (key) => (key === ItemKeys.report() ? tracker.item(() => buildVolumeReport(empty, ownership), Date.now()) : undefined),
  });
  return async () => (await send([ItemKeys.report()], new Map())).get(ItemKeys.report())?.type;
}

describe('which failures move a request to the next backend', () => {
  const error = (kind: BackendRequestError['kind'], status?: number, code?: string) => new BackendRequestError(kind, 'x', status, undefined, code);

  it('no answer, a timeout or a 5xx -> unavailable', () => {
    expect(isUnavailability(error('network'))).toBe(true);
    expect(isUnavailability(error('timeout'))).toBe(true);
    expect(isUnavailability(error('http', 503, 'registry_missing'))).toBe(true);
    expect(isUnavailability(error('http', 502))).toBe(true);
    expect(isUnavailability(error('http', 500, 'internal'))).toBe(true);
  });

  it('a refusal (401, 403, 404, 409, 400, the contract) or an answer that is not the backend\'s -> not unavailable', () => {
    expect(isUnavailability(error('http', 401, 'bad_signature'))).toBe(false);
    expect(isUnavailability(error('http', 403, 'registration_invalid'))).toBe(false);
    expect(isUnavailability(error('http', 404, 'unknown_cluster'))).toBe(false);
    expect(isUnavailability(error('http', 409, 'replayed'))).toBe(false);
    expect(isUnavailability(error('http', 400, 'invalid_request'))).toBe(false);
    expect(isUnavailability(error('contract', 426))).toBe(false);
    expect(isUnavailability(error('response', 200))).toBe(false);
    expect(isUnavailability(error('http', 403))).toBe(false);
  });
});

describe('BackendChoice', () => {
  it('tries the one in use first, then the others in the configured order', () => {
    const choice = new BackendChoice(['a', 'b', 'c']);
    expect(choice.order()).toEqual(['a', 'b', 'c']);
    choice.unavailable('a');
    expect(choice.active()).toBe('b');
    expect(choice.order()).toEqual(['b', 'c', 'a']);
  });

  it('a late report about a backend already left -> the one in use stays', () => {
    const choice = new BackendChoice(['a', 'b']);
    choice.unavailable('a');
    choice.unavailable('a'); // a second request in flight to a, failing after the first
    expect(choice.active()).toBe('b');
    choice.failBack();
    expect(choice.active()).toBe('a');
    expect(choice.onPrimary()).toBe(true);
  });
});

describe('the sender with a standby backend', () => {
  it('the primary refuses connections -> the same batch goes to the standby at once, which serves it and stays in use', async () => {
    const { fetch, asked } = backendsAnswering({ [PRIMARY]: 'down', [STANDBY]: 'serve' });
    const choice = new BackendChoice([PRIMARY, STANDBY]);
    const switched: string[] = [];
    const turn = senderOver(fetch, choice, switched);
    expect(await turn()).toBe('done');
    expect(asked).toEqual([PRIMARY, STANDBY]);
    expect(choice.active()).toBe(STANDBY);
    expect(switched).toEqual([STANDBY]);
    // The next batch goes straight to the standby.
    expect(await turn()).toBe('done');
    expect(asked).toEqual([PRIMARY, STANDBY, STANDBY]);
  });

  it.each<[string, Answer]>([
    ['a timeout', 'timeout'],
    ['HTTP 503', { status: 503, code: 'registry_missing' }],
    ['HTTP 502 from a gateway', { status: 502 }],
  ])('the primary gives %s -> the standby serves the batch', async (_what, answer) => {
    const { fetch, asked } = backendsAnswering({ [PRIMARY]: answer, [STANDBY]: 'serve' });
    const choice = new BackendChoice([PRIMARY, STANDBY]);
    expect(await senderOver(fetch, choice)()).toBe('done');
    expect(asked).toEqual([PRIMARY, STANDBY]);
  });

  it.each<[string, Answer]>([
    ['401 bad_signature', { status: 401, code: 'bad_signature' }],
    ['403 registration_invalid', { status: 403, code: 'registration_invalid' }],
    ['404 unknown_cluster', { status: 404, code: 'unknown_cluster' }],
    ['409 replayed', { status: 409, code: 'replayed' }],
  ])('the primary refuses (%s) -> not sent to the standby; the batch waits with backoff', async (_what, answer) => {
    const { fetch, asked } = backendsAnswering({ [PRIMARY]: answer, [STANDBY]: 'serve' });
    const choice = new BackendChoice([PRIMARY, STANDBY]);
    expect(await senderOver(fetch, choice)()).toBe('error');
    expect(asked).toEqual([PRIMARY]);
    expect(choice.active()).toBe(PRIMARY);
  });

  it('both unavailable -> each tried once, the batch waits with backoff', async () => {
    const { fetch, asked } = backendsAnswering({ [PRIMARY]: 'down', [STANDBY]: { status: 503, code: 'internal' } });
    const choice = new BackendChoice([PRIMARY, STANDBY]);
    expect(await senderOver(fetch, choice)()).toBe('error');
    expect(asked).toEqual([PRIMARY, STANDBY]);
  });

  it('a single backend (no standby) -> tried once, as before', async () => {
    const { fetch, asked } = backendsAnswering({ [PRIMARY]: 'down' });
    expect(await senderOver(fetch, new BackendChoice([PRIMARY]))()).toBe('error');
    expect(asked).toEqual([PRIMARY]);
  });
});

describe('failing back', () => {
  it('on a standby, the first backend is checked until it accepts; then requests go back to it', async () => {
    const choice = new BackendChoice([PRIMARY, STANDBY]);
    choice.unavailable(PRIMARY);
    let primaryUp = false;
    const checked: string[] = [];
    const switched: string[] = [];
    const stop = startFailback({
      choice,
      intervalMs: 10,
      logger: silentLogger,
      onSwitch: (url) => switched.push(url),
      check: async (url) => {
        checked.push(url);
        if (!primaryUp) throw new BackendRequestError('network', 'connect ECONNREFUSED');
        return 'accepted';
      },
    });
    try {
      await sleep(60);
      expect(checked.length).toBeGreaterThan(1);
      expect(new Set(checked)).toEqual(new Set([PRIMARY]));
      expect(choice.active()).toBe(STANDBY);
      primaryUp = true;
      for (let i = 0; i < 100 && !choice.onPrimary(); i++) await sleep(10);
      expect(choice.active()).toBe(PRIMARY);
      expect(switched).toEqual([PRIMARY]);
      // On the first backend, nothing more is checked.
      const count = checked.length;
      await sleep(50);
      expect(checked.length).toBe(count);
    } finally {
      stop();
    }
  });
});

describe('configuration', () => {
  const base = { VOLHOOK_API_URL: PRIMARY, VOLHOOK_CLUSTER_ID: 'c1', VOLHOOK_SECRET: SECRET_C1 };

  it('VOLHOOK_STANDBY_API_URLS, comma-separated -> tried after VOLHOOK_API_URL, in order', () => {
    const config = configFromEnv({ ...base, VOLHOOK_STANDBY_API_URLS: ` ${STANDBY}, http://third.invalid/ ,`, VOLHOOK_FAILBACK_SECONDS: '12' });
    expect(backendUrls(config)).toEqual([PRIMARY, STANDBY, 'http://third.invalid/']);
    expect(config.failbackSeconds).toBe(12);
  });

  it('unset -> one backend, failback every 30 s', () => {
    const config = configFromEnv(base);
    expect(backendUrls(config)).toEqual([PRIMARY]);
    expect(config.failbackSeconds).toBe(30);
  });

  it('a standby that is the primary again, or not a URL -> refused, naming the variable', () => {
    expect(() => configFromEnv({ ...base, VOLHOOK_STANDBY_API_URLS: `${PRIMARY}/` })).toThrow(/names a backend twice[\s\S]*at VOLHOOK_STANDBY_API_URLS/);
    expect(() => configFromEnv({ ...base, VOLHOOK_STANDBY_API_URLS: 'ftp://x' })).toThrow(ConfigError);
  });

  it('a client certificate with an http standby -> refused', () => {
    const https = { ...base, VOLHOOK_API_URL: 'https://primary.invalid', VOLHOOK_CLIENT_CERT_FILE: '/c', VOLHOOK_CLIENT_KEY_FILE: '/k' };
    expect(() => configFromEnv({ ...https, VOLHOOK_STANDBY_API_URLS: STANDBY })).toThrow(/every standby URL must be https/);
    expect(backendUrls(configFromEnv({ ...https, VOLHOOK_STANDBY_API_URLS: 'https://standby.invalid' }))).toEqual(['https://primary.invalid', 'https://standby.invalid']);
  });
});
