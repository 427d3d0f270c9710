/**
 * The scheduled audit (functions/audit.ts) runs each cluster in its own EC2 session, as the API
 * does: the registration's role, else VOLHOOK_EC2_ROLE_ARN; a cluster with neither is reported
 * failed with the reason, and the others are audited all the same.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeSnapshotsCommand, DescribeVolumesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, expect, it, vi } from 'vitest';
import { createFileReportStore } from '../../lib/reports/index.js';

const ROLE = 'arn:aws:iam::222222222222:role/volhook/team-a';
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const ec2Mock = mockClient(EC2Client);
const stsMock = mockClient(STSClient);

afterAll(() => {
  ec2Mock.restore();
  stsMock.restore();
  vi.unstubAllEnvs();
});

it("each cluster in its own session (the registration's role); a cluster with no role anywhere -> failed naming aws.roleArn and VOLHOOK_EC2_ROLE_ARN, no EC2 call for it", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'volhook-audit-sessions-'));
  const registryFile = join(dir, 'clusters.json');
  writeFileSync(
    registryFile,
    JSON.stringify({
      clusters: {
        fenced: { clusterId: 'fenced', secrets: [SECRET], region: 'us-east-1', aws: { roleArn: ROLE, externalId: 'ext-42' } },
        plain: { clusterId: 'plain', secrets: [SECRET], region: 'us-east-1' },
      },
    }),
  );
  const reports = createFileReportStore(join(dir, 'reports'));
  for (const clusterId of ['fenced', 'plain']) {
    await reports.put({ clusterId, digest: 'a'.repeat(64), observedAt: Date.now() - 1000, receivedAt: Date.now() - 1000, report: { volumes: [], attachments: [], claims: [] } });
  }
  vi.stubEnv('VOLHOOK_REGISTRY_FILE', registryFile);
  vi.stubEnv('VOLHOOK_REGISTRY_SSM_PATH', '');
  vi.stubEnv('VOLHOOK_REPORTS_TABLE', '');
  vi.stubEnv('VOLHOOK_REPORTS_DIR', join(dir, 'reports'));
  vi.stubEnv('VOLHOOK_BUDGET_TABLE', '');
  vi.stubEnv('VOLHOOK_EC2_ROLE_ARN', '');
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDLAMBDA');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'lambda');

  const signedWith: string[] = [];
  const signed = async (getClient: () => EC2Client) => {
    signedWith.push((await (getClient().config.credentials as () => Promise<{ accessKeyId: string }>)()).accessKeyId);
  };
  ec2Mock.on(DescribeVolumesCommand).callsFake(async (_i, getClient) => (await signed(getClient), { Volumes: [] }));
  ec2Mock.on(DescribeSnapshotsCommand).callsFake(async (_i, getClient) => (await signed(getClient), { Snapshots: [] }));
  stsMock.on(AssumeRoleCommand).resolves({ Credentials: { AccessKeyId: 'ASIAFENCED', SecretAccessKey: 's', SessionToken: 't', Expiration: new Date(Date.now() + 3_600_000) } });

  vi.resetModules();
  const { handler } = await import('../../functions/audit.js');
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  let result;
  try {
    result = await handler({}, { getRemainingTimeInMillis: () => 120_000 });
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
  const byCluster = Object.fromEntries(result.clusters.map((c) => [c.clusterId, c]));
  expect(byCluster.fenced).toEqual({ clusterId: 'fenced', outcome: 'audited' });
  expect(byCluster.plain).toMatchObject({ clusterId: 'plain', outcome: 'failed' });
  expect(byCluster.plain!.detail).toMatch(/no EC2 role for cluster "plain".*aws\.roleArn.*VOLHOOK_EC2_ROLE_ARN/);
  expect(stsMock.commandCalls(AssumeRoleCommand).map((c) => c.args[0].input)).toEqual([
    { RoleArn: ROLE, RoleSessionName: 'volhook-fenced', DurationSeconds: 3600, ExternalId: 'ext-42', Tags: [{ Key: 'volhook-cluster', Value: 'fenced' }] },
  ]);
  expect(signedWith.length).toBeGreaterThan(0);
  expect(new Set(signedWith)).toEqual(new Set(['ASIAFENCED']));
});
