import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFromEnv, ConfigError } from '../../lib/forwarder/config.js';
import { silentLogger } from '../../lib/forwarder/index.js';
import { openSecret } from '../../lib/forwarder/secret.js';

const LOCAL_SECRET = 'local-secret-of-24-bytes-at-least';
const base = { VOLHOOK_API_URL: 'https://volhook.example.com', VOLHOOK_CLUSTER_ID: 'prod-1', VOLHOOK_SECRET_FILE: '/var/run/secrets/volhook/secret' };

function problem(env: Record<string, string>): string {
  try {
    configFromEnv(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('configFromEnv', () => {
  it('only the required variables -> the documented defaults', () => {
    expect(configFromEnv(base)).toMatchObject({
      apiUrl: 'https://volhook.example.com',
      clusterId: 'prod-1',
      secretFile: '/var/run/secrets/volhook/secret',
      provisioner: 'ebs.csi.aws.com',
      driver: 'ebs.csi.aws.com',
      batchSize: 100,
      concurrency: 4,
      resyncSeconds: 300,
      port: 8080,
      requestTimeoutMs: 25_000,
      backoffInitialMs: 1_000,
      backoffMaxMs: 300_000,
    });
  });

  it('every variable set -> parsed, numbers as numbers', () => {
    const config = configFromEnv({
      ...base,
      VOLHOOK_SECRET_FILE: '',
      VOLHOOK_SECRET: LOCAL_SECRET,
      VOLHOOK_PROVISIONER: 'volhook.example.com',
      VOLHOOK_DRIVER: 'ebs.csi.aws.com',
      VOLHOOK_BATCH_SIZE: '500',
      VOLHOOK_CONCURRENCY: '8',
      VOLHOOK_RESYNC_SECONDS: '60',
      VOLHOOK_PORT: '9090',
      VOLHOOK_KUBE_SERVER: 'http://127.0.0.1:8001',
    });
    expect(config).toMatchObject({ secret: LOCAL_SECRET, batchSize: 500, concurrency: 8, resyncSeconds: 60, port: 9090, kubeServer: 'http://127.0.0.1:8001' });
    expect(config.secretFile).toBeUndefined();
  });

  it('bad values -> an error naming each variable', () => {
    expect(problem({ ...base, VOLHOOK_BATCH_SIZE: '501' })).toContain('VOLHOOK_BATCH_SIZE');
    expect(problem({ ...base, VOLHOOK_CONCURRENCY: 'many' })).toContain('VOLHOOK_CONCURRENCY');
    expect(problem({ ...base, VOLHOOK_API_URL: 'not a url' })).toContain('VOLHOOK_API_URL');
    expect(problem({ VOLHOOK_SECRET: 'x' })).toMatch(/✖ is required\n\s+→ at VOLHOOK_API_URL\n✖ is required\n\s+→ at VOLHOOK_CLUSTER_ID/);
  });

  it("a cluster id the registry refuses (VOLHOOK_CLUSTER_ID=X) -> refused at start with the registry's rule; one it accepts -> taken", () => {
    for (const id of ['X', 'prod_1', '-a', 'a'.repeat(64)]) {
      const message = problem({ ...base, VOLHOOK_CLUSTER_ID: id });
      expect(message, id).toContain('VOLHOOK_CLUSTER_ID');
      expect(message, id).toContain('a cluster id is 1–63 lower-case letters, digits or dashes');
    }
    for (const id of ['x', 'prod-1', 'a'.repeat(63)]) expect(configFromEnv({ ...base, VOLHOOK_CLUSTER_ID: id }).clusterId).toBe(id);
  });

  it('no secret, or both secret kinds -> refused', () => {
    expect(problem({ VOLHOOK_API_URL: base.VOLHOOK_API_URL, VOLHOOK_CLUSTER_ID: 'c' })).toContain('VOLHOOK_SECRET');
    expect(problem({ ...base, VOLHOOK_SECRET: LOCAL_SECRET })).toContain('exactly one of VOLHOOK_SECRET_FILE or VOLHOOK_SECRET');
  });

  it.each([
    ['whsec_ + non-base64 (an empty key)', 'whsec_!!!!!!!!!!!!!!!!!!!!!!!!'],
    ['whsec_ + 16 bytes', `whsec_${Buffer.alloc(16, 1).toString('base64')}`],
    ['a raw secret of 12 bytes', 'local-secret'],
  ])('VOLHOOK_SECRET %s -> refused, naming the variable but not the secret', (_name, secret) => {
    const message = problem({ VOLHOOK_API_URL: base.VOLHOOK_API_URL, VOLHOOK_CLUSTER_ID: 'c', VOLHOOK_SECRET: secret });
    expect(message).toMatch(/✖ unusable webhook secret.*\n\s+→ at VOLHOOK_SECRET$/m);
    expect(message).not.toContain(secret);
  });
});

describe('configFromEnv: TLS files (VOLHOOK_CA_FILE, VOLHOOK_CLIENT_CERT_FILE, VOLHOOK_CLIENT_KEY_FILE)', () => {
  const cert = { VOLHOOK_CLIENT_CERT_FILE: '/var/run/secrets/volhook-tls/tls.crt', VOLHOOK_CLIENT_KEY_FILE: '/var/run/secrets/volhook-tls/tls.key' };

  it('a CA bundle, a client certificate and its key -> taken; none -> none', () => {
    expect(configFromEnv({ ...base, ...cert, VOLHOOK_CA_FILE: '/etc/volhook/ca/ca.crt' })).toMatchObject({
      caFile: '/etc/volhook/ca/ca.crt',
      clientCertFile: cert.VOLHOOK_CLIENT_CERT_FILE,
      clientKeyFile: cert.VOLHOOK_CLIENT_KEY_FILE,
    });
    const none = configFromEnv(base);
    expect([none.caFile, none.clientCertFile, none.clientKeyFile]).toEqual([undefined, undefined, undefined]);
  });

  it('a certificate without its key, or a key without its certificate -> refused naming both variables', () => {
    const both = 'VOLHOOK_CLIENT_CERT_FILE and VOLHOOK_CLIENT_KEY_FILE go together: set both or neither';
    expect(problem({ ...base, VOLHOOK_CLIENT_CERT_FILE: cert.VOLHOOK_CLIENT_CERT_FILE })).toContain(both);
    expect(problem({ ...base, VOLHOOK_CLIENT_CERT_FILE: cert.VOLHOOK_CLIENT_CERT_FILE })).toMatch(/at VOLHOOK_CLIENT_KEY_FILE/);
    expect(problem({ ...base, VOLHOOK_CLIENT_KEY_FILE: cert.VOLHOOK_CLIENT_KEY_FILE })).toMatch(/at VOLHOOK_CLIENT_CERT_FILE/);
  });

  it('a client certificate with a plain-http backend -> refused (it would never be shown); https -> taken', () => {
    expect(problem({ ...base, ...cert, VOLHOOK_API_URL: 'http://volhook.internal:3000' })).toMatch(/VOLHOOK_API_URL must be https:\/\//);
    expect(configFromEnv({ ...base, ...cert }).apiUrl).toBe('https://volhook.example.com');
  });
});

describe('openSecret (the mounted Secret file)', () => {
  const good = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
  const fileWith = (text: string) => {
    const file = join(mkdtempSync(join(tmpdir(), 'volhook-secret-')), 'secret');
    writeFileSync(file, text);
    return file;
  };

  it('a file holding an empty-key secret -> the forwarder does not start', async () => {
    await expect(openSecret({ file: fileWith('whsec_!!!!!!!!!!!!!!!!!!!!!!!!\n'), pollMs: 60_000, logger: silentLogger })).rejects.toThrow(/unusable webhook secret/);
  });

  it('a file rewritten with an unusable secret -> the previous secret is kept', async () => {
    const file = fileWith(`${good}\n`);
    const source = await openSecret({ file, pollMs: 60_000, logger: silentLogger });
    try {
      writeFileSync(file, 'whsec_');
      await source.reload();
      expect(source.current()).toBe(good);
    } finally {
      source.close();
    }
  });

});

describe('configFromEnv: leader election', () => {
  it('leader election -> off by default; on with the Lease namespace, client-go\'s timings by default, others from seconds', () => {
    expect(configFromEnv(base)).toMatchObject({ leaderElect: false, leaseName: 'volhook-forwarder', leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 });
    expect(
      configFromEnv({
        ...base,
        VOLHOOK_LEADER_ELECT: 'true',
        VOLHOOK_LEASE_NAMESPACE: 'volhook-system',
        VOLHOOK_LEADER_IDENTITY: 'pod-a',
        VOLHOOK_LEASE_DURATION_SECONDS: '2',
        VOLHOOK_RENEW_DEADLINE_SECONDS: '1',
        VOLHOOK_RETRY_PERIOD_SECONDS: '0.25',
      }),
    ).toMatchObject({ leaderElect: true, leaseNamespace: 'volhook-system', leaderIdentity: 'pod-a', leaseDurationSeconds: 2, renewDeadlineSeconds: 1, retryPeriodSeconds: 0.25 });
  });

  it('leader election without a Lease namespace, a non-boolean switch, or timings client-go refuses -> an error naming the variable', () => {
    expect(problem({ ...base, VOLHOOK_LEADER_ELECT: 'true' })).toContain('VOLHOOK_LEASE_NAMESPACE');
    expect(problem({ ...base, VOLHOOK_LEADER_ELECT: 'yes' })).toContain('VOLHOOK_LEADER_ELECT');
    const timing = problem({ ...base, VOLHOOK_LEADER_ELECT: 'true', VOLHOOK_LEASE_NAMESPACE: 'x', VOLHOOK_RENEW_DEADLINE_SECONDS: '20' });
    expect(timing).toContain('leaseDuration must be greater than renewDeadline');
    expect(timing).toContain('VOLHOOK_RENEW_DEADLINE_SECONDS');
    expect(problem({ ...base, VOLHOOK_LEASE_DURATION_SECONDS: '1.5' })).toContain('VOLHOOK_LEASE_DURATION_SECONDS');
  });
});
