/**
 * Which secret a forwarder replica signs with, visible per replica: the metric
 * volhook_forwarder_signing_secret_info{fingerprint} is 1 for the secret read now and for no
 * other, following a rotated Secret file; the fingerprint is the one `cluster rotate-secret`
 * prints, and `/readyz` names it in a header.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { secretFingerprint } from '../../lib/contract/signing.js';
import { createMetrics } from '../../lib/forwarder/metrics.js';
import { openSecret, signingSecretMetric } from '../../lib/forwarder/secret.js';
import { SIGNING_SECRET_HEADER, startHealthServer } from '../../lib/forwarder/server.js';
import { runCli } from '../deploy/cli-run.js';

const OLD = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const NEW = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
const logger = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Parameters<typeof openSecret>[0]['logger'];

async function series(metrics: ReturnType<typeof createMetrics>): Promise<string[]> {
  const text = await metrics.registry.metrics();
  return text.split('\n').filter((line) => line.startsWith('volhook_forwarder_signing_secret_info{'));
}

describe('volhook_forwarder_signing_secret_info', () => {
  it('the secret read at start, then the rotated one alone once the file changes; /readyz names it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'volhook-secret-')), 'secret');
    writeFileSync(file, OLD);
    const metrics = createMetrics({ queueDepth: () => 0, defaultMetrics: false });
    const secret = await openSecret({ file, pollMs: 60_000, logger, onChange: signingSecretMetric(metrics.signingSecret) });
    try {
      expect(await series(metrics)).toEqual([`volhook_forwarder_signing_secret_info{fingerprint="${secretFingerprint(OLD)}"} 1`]);
      writeFileSync(file, NEW);
      await secret.reload();
      expect(await series(metrics)).toEqual([`volhook_forwarder_signing_secret_info{fingerprint="${secretFingerprint(NEW)}"} 1`]);
      expect(secretFingerprint(NEW)).not.toBe(secretFingerprint(OLD));

      const server = await startHealthServer({ port: 0, host: '127.0.0.1', readiness: () => ({ ready: true }), registry: metrics.registry, headers: () => ({ [SIGNING_SECRET_HEADER]: secretFingerprint(secret.current()) }) });
      try {
        const answer = await fetch(`http://127.0.0.1:${server.port}/readyz`);
        expect(answer.status).toBe(200);
        expect(answer.headers.get(SIGNING_SECRET_HEADER)).toBe(secretFingerprint(NEW));
      } finally {
        await server.close();
      }
    } finally {
      secret.close();
    }
  });

  it('a file rewritten with an unusable secret -> the metric keeps the one still signed with', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'volhook-secret-')), 'secret');
    writeFileSync(file, OLD);
    const metrics = createMetrics({ queueDepth: () => 0, defaultMetrics: false });
    const secret = await openSecret({ file, pollMs: 60_000, logger, onChange: signingSecretMetric(metrics.signingSecret) });
    writeFileSync(file, 'not-a-secret');
    await secret.reload();
    expect(await series(metrics)).toEqual([`volhook_forwarder_signing_secret_info{fingerprint="${secretFingerprint(OLD)}"} 1`]);
    secret.close();
  });

  it('cluster rotate-secret prints the new secret\'s fingerprint, the one the metric will show', async () => {
    const registry = join(mkdtempSync(join(tmpdir(), 'volhook-rotate-')), 'clusters.json');
    expect((await runCli(['add', 'c1', '--region', 'us-east-1', '--file', registry])).code).toBe(0);
    const rotated = await runCli(['rotate-secret', 'c1', '--file', registry]);
    expect(rotated.code).toBe(0);
    const secret = Buffer.from(/secret: (\S+)/.exec(rotated.stdout)![1]!, 'base64').toString('utf8');
    expect(rotated.stderr).toContain(`volhook_forwarder_signing_secret_info{fingerprint="${secretFingerprint(secret)}"} is 1`);
  });
});
