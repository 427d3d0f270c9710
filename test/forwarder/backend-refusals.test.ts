/**
 * The decisions behind a backend that refuses the forwarder: which refusal an error is, the
 * message that names the cause and the fix (the same on every repeat), and, on a manual clock,
 * when a streak of refusals surfaces and when it fails readiness.
 */
import { describe, expect, it } from 'vitest';
import { BackendRequestError } from '../../lib/forwarder/backend-client.js';
import { heldBackObjects, refusalEvent, refusalOf, RefusalStreak, refusalText, type BackendRefusal } from '../../lib/forwarder/backend-refusals.js';
import { configFromEnv, parseConfig } from '../../lib/forwarder/config.js';

const http = (status: number, code?: string) => new BackendRequestError('http', `HTTP ${status}`, status, undefined, code);
const context = { clusterId: 'prod-1', apiUrl: 'https://backend.example', secretFile: '/var/run/secrets/volhook/secret' };

describe('refusalOf', () => {
  it.each([
    [http(401, 'bad_signature'), { cause: 'signature', status: 401, code: 'bad_signature' }],
    [http(403, 'registration_invalid'), { cause: 'registration', status: 403, code: 'registration_invalid' }],
    [http(404, 'unknown_cluster'), { cause: 'unregistered', status: 404, code: 'unknown_cluster' }],
    [http(400, 'invalid_request'), { cause: 'request', status: 400, code: 'invalid_request' }],
    [http(413), { cause: 'request', status: 413 }],
    [http(500, 'internal'), { cause: 'failing', status: 500, code: 'internal' }],
    [http(503), { cause: 'failing', status: 503 }],
    [new BackendRequestError('network', 'ECONNREFUSED'), { cause: 'unreachable' }],
    [new BackendRequestError('timeout', 'no answer'), { cause: 'unreachable' }],
    [new BackendRequestError('response', 'malformed response', 200), { cause: 'backend_unusable', status: 200 }],
    // Without the app's error shape: API Gateway's 404 for a path it does not route, a firewall's 403.
    [http(404), { cause: 'backend_unusable', status: 404 }],
    [http(403), { cause: 'backend_unusable', status: 403 }],
    [http(401), { cause: 'backend_unusable', status: 401 }],
  ])('%s -> %o', (err, refusal) => {
    expect(refusalOf(err)).toEqual(refusal);
  });

  it("control: the contract's 426 (final, handled as a readiness failure of its own) -> no refusal", () => {
    expect(refusalOf(new BackendRequestError('contract', 'HTTP 426', 426))).toBeUndefined();
  });
});

describe('refusalText', () => {
  it('401 -> the Secret at fault and `npm run cluster -- show <id> --show-secrets`, not rotate-secret (which adds a secret)', () => {
    const text = refusalText({ cause: 'signature', status: 401, code: 'bad_signature' }, context);
    expect(text).toContain("the backend refuses this cluster's signature (HTTP 401 bad_signature)");
    expect(text).toContain('the Secret mounted at /var/run/secrets/volhook/secret');
    expect(text).toContain('the newest secret that `npm run cluster -- show prod-1 --show-secrets` prints');
    expect(text).not.toContain('rotate-secret');
  });

  it('404 -> not registered, `npm run cluster -- add <id>`; 403 -> the registration, `cluster -- show`', () => {
    expect(refusalText({ cause: 'unregistered', status: 404 }, context)).toContain('the backend does not know cluster "prod-1" (HTTP 404): it is not registered');
    expect(refusalText({ cause: 'unregistered', status: 404 }, context)).toContain('`npm run cluster -- add prod-1`');
    expect(refusalText({ cause: 'registration', status: 403 }, context)).toContain('`npm run cluster -- show prod-1`');
  });

  it('5xx and no answer -> the backend failing / unreachable, reason BackendUnavailable; 4xx -> BackendRefused', () => {
    expect(refusalText({ cause: 'failing', status: 502 }, context)).toContain('the backend is failing (HTTP 502)');
    expect(refusalText({ cause: 'unreachable' }, context)).toContain('the backend at https://backend.example does not answer');
    const pvc = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', name: 'data', namespace: 'app', uid: 'u1' } as const;
    expect(refusalEvent(pvc, { cause: 'failing', status: 500 }, context)).toMatchObject({ op: 'createEvent', type: 'Warning', reason: 'BackendUnavailable', involvedObject: pvc });
    expect(refusalEvent(pvc, { cause: 'signature', status: 401 }, context).reason).toBe('BackendRefused');
  });

  it('a 2xx that is not the backend answer -> names the URL, a proxy and VOLHOOK_API_URL; reason BackendUnavailable', () => {
    const text = refusalText({ cause: 'backend_unusable', status: 200 }, context);
    expect(text).toContain("the answer from https://backend.example (HTTP 200) is not the volhook backend's answer to the request");
    expect(text).toContain('check VOLHOOK_API_URL');
    const pvc = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', name: 'data', namespace: 'app', uid: 'u1' } as const;
    expect(refusalEvent(pvc, { cause: 'backend_unusable', status: 200 }, context).reason).toBe('BackendUnavailable');
  });

  it('every cause -> the same words on every repeat (no count, time or id: the Events aggregate)', () => {
    const causes: BackendRefusal[] = [{ cause: 'signature', status: 401 }, { cause: 'registration', status: 403 }, { cause: 'unregistered', status: 404 }, { cause: 'request', status: 400 }, { cause: 'failing', status: 500 }, { cause: 'unreachable' }, { cause: 'backend_unusable', status: 200 }];
    for (const refusal of causes) expect(refusalText(refusal, context)).toBe(refusalText({ ...refusal }, { ...context }));
  });
});

describe('heldBackObjects', () => {
  it('claims and VolumeAttachments of a refused request -> their refs; control: a PV or report item -> none', () => {
    const items = [
      { kind: 'PersistentVolumeClaim', pvc: { metadata: { name: 'data', namespace: 'app', uid: 'u1' } } },
      { kind: 'VolumeAttachment', volumeAttachment: { metadata: { name: 'csi-1', uid: 'u2' } } },
      { kind: 'PersistentVolume', pv: { metadata: { name: 'pv-1', uid: 'u3' } } },
    ] as unknown as Parameters<typeof heldBackObjects>[0];
    expect(heldBackObjects(items)).toEqual([
      { kind: 'PersistentVolumeClaim', apiVersion: 'v1', name: 'data', namespace: 'app', uid: 'u1' },
      { kind: 'VolumeAttachment', apiVersion: 'storage.k8s.io/v1', name: 'csi-1', uid: 'u2' },
    ]);
  });
});

describe('RefusalStreak (manual clock; events after 10 s, readiness after 60 s)', () => {
  const setup = () => {
    let now = 1_000;
    const streak = new RefusalStreak({ eventAfterMs: 10_000, readyAfterMs: 60_000, now: () => now });
    return { streak, advance: (ms: number) => void (now += ms) };
  };
  const unauthorized: BackendRefusal = { cause: 'signature', status: 401 };

  it('refusals for 9 s -> nothing surfaced, ready; at 10 s -> surfaced once (one log line), still ready; at 60 s -> not ready', () => {
    const { streak, advance } = setup();
    expect(streak.refused(unauthorized)).toBe(false);
    advance(9_000);
    expect(streak.refused(unauthorized)).toBe(false);
    expect(streak.state()).toEqual({ refusal: unauthorized, notReady: false });
    advance(1_000);
    expect(streak.refused(unauthorized)).toBe(true);
    expect(streak.refused(unauthorized)).toBe(false);
    expect(streak.state()).toEqual({ refusal: unauthorized, surfaced: unauthorized, notReady: false });
    advance(50_000);
    expect(streak.state().notReady).toBe(true);
  });

  it('a request served -> the streak ends (true once surfaced), ready again; the next refusal starts a new streak', () => {
    const { streak, advance } = setup();
    streak.refused(unauthorized);
    advance(60_000);
    streak.refused(unauthorized);
    expect(streak.state().notReady).toBe(true);
    expect(streak.served()).toBe(true);
    expect(streak.state()).toEqual({ notReady: false });
    streak.refused({ cause: 'failing', status: 500 });
    advance(9_999);
    expect(streak.state()).toEqual({ refusal: { cause: 'failing', status: 500 }, notReady: false });
  });

  it('control: refusals interleaved with requests served (a flaky backend) -> never surfaced, never not ready', () => {
    const { streak, advance } = setup();
    for (let i = 0; i < 20; i++) {
      streak.refused(unauthorized);
      advance(8_000);
      expect(streak.served()).toBe(false);
    }
    expect(streak.state()).toEqual({ notReady: false });
  });
});

describe('configuration', () => {
  const base = { apiUrl: 'https://x', secret: 'config-test-secret-0123456789' };
  it('VOLHOOK_REFUSED_READY_SECONDS -> refusedReadySeconds, default 60; 0 or less refused', () => {
    expect(parseConfig({ ...base, clusterId: 'c1' }).refusedReadySeconds).toBe(60);
    expect(parseConfig({ ...base, clusterId: 'c1', refusedReadySeconds: 5 }).refusedReadySeconds).toBe(5);
    expect(() => parseConfig({ ...base, clusterId: 'c1', refusedReadySeconds: 0 })).toThrow(/refusedReadySeconds/);
    const env = { VOLHOOK_API_URL: 'https://x', VOLHOOK_CLUSTER_ID: 'c1', VOLHOOK_SECRET: base.secret };
    expect(configFromEnv({ ...env, VOLHOOK_REFUSED_READY_SECONDS: '15' }).refusedReadySeconds).toBe(15);
    expect(() => configFromEnv({ ...env, VOLHOOK_REFUSED_READY_SECONDS: 'soon' })).toThrow(/VOLHOOK_REFUSED_READY_SECONDS/);
  });
});
