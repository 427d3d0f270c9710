/**
 * docs/deploy.md, "Outage and disaster recovery", against the code: the settings, defaults,
 * statuses, metric, stores and test it names are the ones the code has.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_SHARE } from '../../lib/budget/index.js';
import { sharedTableRefusal } from '../../lib/dynamodb/shared-table.js';
import { SIGNATURE_TOLERANCE_SECONDS } from '../../lib/contract/index.js';
import { BackendRequestError } from '../../lib/forwarder/backend-client.js';
import { ENV_VARS, parseConfig } from '../../lib/forwarder/config.js';
import { isUnavailability } from '../../lib/forwarder/failover.js';
import { createMetrics } from '../../lib/forwarder/metrics.js';
import { DEFAULT_BACKOFF } from '../../lib/forwarder/queue.js';

const deploy = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
const section = deploy.split('\n## Outage and disaster recovery\n')[1]?.split('\n## ')[0] ?? '';
const values = parse(readFileSync(new URL('../../charts/volhook-forwarder/values.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;
const defaults = parseConfig({ apiUrl: 'https://x', clusterId: 'c', secret: 'failover-docs-secret-0123456789' });
const source = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('docs/deploy.md, "Outage and disaster recovery"', () => {
  it('is there, with what stops, the standby, the stores and how to deploy and test it', () => {
    expect(section.length).toBeGreaterThan(1000);
    for (const heading of ['### What stops, what keeps working', '### A standby backend', '### The stores of two backends', '### Deploying and testing a standby']) {
      expect(section).toContain(heading);
    }
  });

  it('every VOLHOOK_ variable it names is one the forwarder or the backend reads', () => {
    const named = new Set([...section.matchAll(/`(VOLHOOK_[A-Z_]+)`/g)].map((m) => m[1]!));
    expect(named.size).toBeGreaterThan(4);
    const backend = { VOLHOOK_REPLAY_TABLE: 'lib/replay/from-environment.ts', VOLHOOK_BUDGET_TABLE: 'lib/budget/from-environment.ts', VOLHOOK_REPORTS_TABLE: 'lib/reports/from-environment.ts' } as Record<string, string>;
    for (const name of named) {
      if (backend[name]) expect(source(backend[name]), name).toContain(name);
      else expect(Object.values(ENV_VARS), name).toContain(name);
    }
  });

  it("the chart's values it names exist, with the defaults it states", () => {
    for (const value of ['backendUrl', 'standbyBackendUrls', 'failbackSeconds']) {
      expect(section).toContain(`\`${value}\``);
      expect(values, value).toHaveProperty(value);
    }
    expect(values.failbackSeconds).toBe(defaults.failbackSeconds);
    expect(section).toContain(`\`failbackSeconds\` (${defaults.failbackSeconds})`);
    expect(section).toContain(`\`VOLHOOK_REFUSED_READY_SECONDS\` (${defaults.refusedReadySeconds})`);
  });

  it('the backoff, the Warning threshold, the signature window and the budget share are the code\'s', () => {
    expect(DEFAULT_BACKOFF).toEqual({ initialMs: 1_000, maxMs: 5 * 60_000 });
    expect(section).toContain('(1 s, doubling to 5\n  minutes;');
    expect(defaults.refusedEventMs).toBe(10_000);
    expect(section).toContain('After 10 s of nothing but\n  failures');
    expect(SIGNATURE_TOLERANCE_SECONDS).toBe(5 * 60);
    expect(section).toContain("the signature's 5 minutes");
    expect(DEFAULT_SHARE).toBe(0.98);
    expect(section).toContain('98 %');
  });

  it('what moves a request to the standby, and what does not, is what failover.ts decides', () => {
    const error = (kind: BackendRequestError['kind'], status?: number, code?: string) => new BackendRequestError(kind, 'x', status, undefined, code);
    expect(section).toMatch(/no answer \(refused\s+connection, reset, a timeout of `requestTimeoutMs`\) or a 5xx/);
    expect([error('network'), error('timeout'), error('http', 500, 'internal'), error('http', 503)].every(isUnavailability)).toBe(true);
    const refusals: [string, BackendRequestError][] = [
      ['401 `bad_signature`', error('http', 401, 'bad_signature')],
      ['403', error('http', 403, 'registration_invalid')],
      ['404 `unknown_cluster`', error('http', 404, 'unknown_cluster')],
      ['409 `replayed`', error('http', 409, 'replayed')],
      ['another 4xx', error('http', 400, 'invalid_request')],
      ["the contract's 426", error('contract', 426)],
      ["a 2xx that is not the backend's answer", error('response', 200)],
    ];
    for (const [words, err] of refusals) {
      expect(section, words).toContain(words);
      expect(isUnavailability(err), words).toBe(false);
    }
  });

  it('the metric it names is the forwarder\'s', async () => {
    expect(section).toContain('`volhook_forwarder_backend_in_use{url}`');
    const metrics = createMetrics({ queueDepth: () => 0, defaultMetrics: false });
    expect(metrics.registry.getSingleMetric('volhook_forwarder_backend_in_use')).toBeDefined();
  });

  it('the test it names exists and does what it says: kills the primary, judges with the crash explorer, fails back', () => {
    const path = 'test/e2e/backend-failover.test.ts';
    expect(section).toContain(`\`${path}\``);
    expect(existsSync(new URL(`../../${path}`, import.meta.url))).toBe(true);
    const test = source(path);
    for (const piece of ['backends.primary.server!.stop()', 'finalVerdict(', 'unsettled(', 'zeroCounts()', "waitFor(inUse, (url) => url === primaryUrl"]) expect(test, piece).toContain(piece);
  });

  it("the standby's shared tables: the stage params serverless.yml reads, the conditions and statements it names, a deploy line whose values are accepted, the tests and plugin it names", () => {
    const yml = parse(source('serverless.yml')) as { params: { default: Record<string, string> }; custom: { sharedTables: { param: string }[] }; provider: { iam: { role: { statements: { Sid: string }[] } } } };
    expect(section).not.toContain('not yet a parameter');
    expect(yml.custom.sharedTables.map((p) => p.param)).toEqual(['sharedReplayTable', 'sharedBudgetTable']);
    const own = { sharedReplayTable: yml.params.default.replayTable!, sharedBudgetTable: yml.params.default.budgetTable! };
    for (const [param, ownName] of Object.entries(own)) {
      expect(section).toContain(`| \`${param}\` |`);
      const given = new RegExp(`--param="${param}=([^"]+)"`).exec(section)?.[1];
      expect(given, param).toMatch(/^volhook-prod-/);
      expect(sharedTableRefusal({ param, value: given!, own: ownName.replace('${self:service}-${sls:stage}', 'volhook-prod-standby') }), param).toBeUndefined();
    }
    const conditions = parse(source('infra/serverless/shared-tables.yml')) as { Conditions: Record<string, unknown> };
    for (const condition of ['CreatesReplayTable', 'CreatesRateBudgetTable']) {
      expect(section).toContain(`\`${condition}\``);
      expect(conditions.Conditions).toHaveProperty(condition);
    }
    for (const sid of ['RecordWebhookIds', 'ShareTheRateBudget']) {
      expect(section).toContain(`\`${sid}\``);
      expect(yml.provider.iam.role.statements.map((s) => s.Sid)).toContain(sid);
    }
    for (const path of ['test/deploy/package.test.ts', 'test/iam/role-policy.test.ts', 'test/deploy/shared-tables.test.ts', 'infra/serverless/shared-tables.cjs']) {
      expect(section).toContain(`\`${path}\``);
      expect(existsSync(new URL(`../../${path}`, import.meta.url)), path).toBe(true);
    }
  });
});
