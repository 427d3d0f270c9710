/**
 * After `osls deploy`: the stack's outputs printed as the next commands (lib/cli/next-steps.ts),
 * by the local plugin serverless.yml lists (infra/serverless/next-steps.cjs) — run here in its
 * own Node process with a stand-in for the framework whose CloudFormation answers the outputs.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { helmInstallLine } from '../../lib/cli/install-line.js';
import { CLUSTER_ID_PLACEHOLDER, deployNextSteps } from '../../lib/cli/next-steps.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const API_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:volhook-prod-alarms';

describe('deployNextSteps', () => {
  it('the outputs -> the alarm subscription, cluster add with the API URL, and the helm line cluster add prints', () => {
    const lines = deployNextSteps({ outputs: { HttpApiUrl: API_URL, AlarmTopicArn: TOPIC }, stage: 'prod', region: 'eu-west-1', registrySsmPath: '/volhook/prod/clusters/' });
    const text = lines.join('\n');
    expect(text).toContain(`aws sns subscribe --region eu-west-1 --topic-arn ${TOPIC} --protocol email`);
    expect(text).toContain(`npm run -s cluster -- add ${CLUSTER_ID_PLACEHOLDER} --ssm-path /volhook/prod/clusters/ --ssm-region eu-west-1 --region eu-west-1 --api-url ${API_URL} > volhook-forwarder-secret.yaml`);
    expect(lines).toContain(`   ${helmInstallLine({ clusterId: CLUSTER_ID_PLACEHOLDER, backendUrl: API_URL, secretName: 'volhook-forwarder' })}`);
    expect(text).toContain(`--set backendUrl=${API_URL}`);
    expect(text).not.toContain('placeholder');
  });

  it('an output missing -> said, and a placeholder that is no URL in its place (never a wrong URL)', () => {
    const text = deployNextSteps({ outputs: {}, stage: 'dev', region: 'us-east-1' }).join('\n');
    expect(text).toContain('no AlarmTopicArn output');
    expect(text).toContain('--ssm-path /volhook/dev/clusters/');
    expect(text).not.toContain('--api-url');
    expect(text).toContain("'backendUrl=<HttpApiUrl from osls info>'");
    expect(text).toContain('no HttpApiUrl output');
  });
});

describe('deployNextSteps: the mutual-TLS domain deployed', () => {
  it('MutualTlsApiUrl among the outputs -> that URL in every line (the execute-api one is off), with its DNS target and the client certificate to give; without -> no word of it', () => {
    const domain = 'https://volhook.example.com';
    const text = deployNextSteps({ outputs: { HttpApiUrl: API_URL, MutualTlsApiUrl: domain, MutualTlsDomainTarget: 'd-abc.execute-api.eu-west-1.amazonaws.com', AlarmTopicArn: TOPIC }, stage: 'prod', region: 'eu-west-1' }).join('\n');
    expect(text).toContain(`--api-url ${domain}`);
    expect(text).toContain(`--set backendUrl=${domain}`);
    expect(text).not.toContain(API_URL);
    expect(text).toContain('point its DNS name at d-abc.execute-api.eu-west-1.amazonaws.com');
    expect(text).toContain('tls.clientCertSecret');
    expect(deployNextSteps({ outputs: { HttpApiUrl: API_URL }, stage: 'prod', region: 'eu-west-1' }).join('\n')).not.toContain('mutual TLS');
  });
});

describe('infra/serverless/next-steps.cjs', () => {
  it('listed in serverless.yml; after deploy it prints the next steps from the stack it deployed', async () => {
    const plugins = (parse(readFileSync(`${root}/serverless.yml`, 'utf8')) as { plugins: string[] }).plugins;
    expect(plugins).toContain('./infra/serverless/next-steps.cjs');

    // The framework as the plugin sees it: the AWS provider (stage, region, the stack's name,
    // CloudFormation through provider.request) and the resolved environment.
    const script = `
      import { createRequire } from 'node:module';
      const NextSteps = createRequire(${JSON.stringify(`${root}/`)})('./infra/serverless/next-steps.cjs');
      const asked = [];
      const provider = {
        getStage: () => 'prod',
        getRegion: () => 'eu-west-1',
        naming: { getStackName: () => 'volhook-prod' },
        request: async (service, method, params) => {
          asked.push([service, method, params.StackName]);
          return { Stacks: [{ Outputs: [{ OutputKey: 'HttpApiUrl', OutputValue: ${JSON.stringify(API_URL)} }, { OutputKey: 'AlarmTopicArn', OutputValue: ${JSON.stringify(TOPIC)} }] }] };
        },
      };
      const serverless = { serviceDir: ${JSON.stringify(root)}, getProvider: () => provider, service: { provider: { environment: { VOLHOOK_REGISTRY_SSM_PATH: '/volhook/prod/clusters/' } } } };
      await new NextSteps(serverless, {}).hooks['after:deploy:deploy']();
      console.error(JSON.stringify(asked));
    `;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    expect(JSON.parse(stderr.trim().split('\n').at(-1)!)).toEqual([['CloudFormation', 'describeStacks', 'volhook-prod']]);
    const expected = deployNextSteps({ outputs: { HttpApiUrl: API_URL, AlarmTopicArn: TOPIC }, stage: 'prod', region: 'eu-west-1', registrySsmPath: '/volhook/prod/clusters/' });
    expect(stdout.trim().split('\n')).toEqual(expected);
  }, 30_000);
});
