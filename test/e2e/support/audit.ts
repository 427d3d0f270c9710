/**
 * The audit as an operator runs it against a running local stack: `npm run cluster -- audit
 * local` in-process through the CLI's own entry, with nothing but the stack's local directory
 * in its environment; and a fresh report from the forwarder to judge by.
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import { expect } from 'vitest';
import type { AuditResult } from '../../../lib/audit/index.js';
import { runClusterCli } from '../../../lib/cli/index.js';
import { reportTime, type ReportStore } from '../../../lib/reports/index.js';
import type { E2eStack } from './stack.js';
import { waitFor } from './wait.js';

export interface ClusterCli {
  (args: string[], extra?: { env?: NodeJS.ProcessEnv; ec2Client?: () => EC2Client; interactive?: boolean }): Promise<{ code: number; stdout: string; stderr: string }>;
}

/** `npm run cluster -- <args>` in-process, with nothing but the local directory in its environment. */
export function clusterCli(localDir: string): ClusterCli {
  return async (args, extra = {}) => {
    let stdout = '';
    let stderr = '';
    const code = await runClusterCli(args, {
      stdout: (t) => void (stdout += t),
      stderr: (t) => void (stderr += t),
      env: { VOLHOOK_LOCAL_DIR: localDir, ...extra.env },
      ...(extra.ec2Client && { ec2Client: extra.ec2Client }),
      interactive: extra.interactive ?? false,
    });
    return { code, stdout, stderr };
  };
}

/** `audit local --json <args>`, its result parsed (and its exit code 0). */
export function auditCli(cluster: ClusterCli): (...args: string[]) => Promise<AuditResult> {
  return async (...args) => {
    const out = await cluster(['audit', 'local', '--json', ...args]);
    expect(out.code, out.stderr).toBe(0);
    return JSON.parse(out.stdout) as AuditResult;
  };
}

/**
 * Has the forwarder report now, and waits until the backend holds a report dated (as the audit
 * dates it) after `after`: in `reports`, the stack's own unless its backend runs elsewhere.
 */
export async function freshReport(stack: E2eStack, after: number, reports: ReportStore = stack.reports): Promise<void> {
  await waitFor(
    async () => {
      stack.forwarder()?.resync();
      return reports.get(stack.clusterId);
    },
    (r) => r !== undefined && reportTime(r) > after,
    { what: `a volume report of ${stack.clusterId} dated after ${new Date(after).toISOString()}`, intervalMs: 300, timeoutMs: 30_000 },
  );
}
