/**
 * What to run after `osls deploy` (printed by infra/serverless/next-steps.cjs, also after
 * `osls info`): the stack's outputs — the API's URL, the alarm topic — put in the commands
 * that use them. The forwarder's install line is the one `cluster add` prints.
 */
import { helmInstallLine, SECRET_FILE, shellQuote } from './install-line.js';
import { FORWARDER_SECRET } from './secrets.js';

export interface DeployOutputs {
  /** The stack's outputs by key (HttpApiUrl, AlarmTopicArn, …). */
  outputs: Record<string, string | undefined>;
  stage: string;
  region: string;
  /** The deployment's registry path (VOLHOOK_REGISTRY_SSM_PATH); default the stage's. */
  registrySsmPath?: string;
}

/** The cluster id the lines leave for the reader to choose. */
export const CLUSTER_ID_PLACEHOLDER = '<cluster-id>';

export function deployNextSteps({ outputs, stage, region, registrySsmPath = `/volhook/${stage}/clusters/` }: DeployOutputs): string[] {
  // With the mutual-TLS domain the execute-api endpoint is off: the domain is the only URL.
  const apiUrl = outputs.MutualTlsApiUrl ?? outputs.HttpApiUrl;
  const lines: string[] = ['volhook is deployed. Next:'];
  if (outputs.AlarmTopicArn) {
    lines.push(
      '',
      '1. Be told of its alarms (failed items, EC2 throttling, orphaned disks):',
      `   aws sns subscribe --region ${region} --topic-arn ${shellQuote(outputs.AlarmTopicArn)} --protocol email --notification-endpoint <you@example.com>`,
    );
  } else {
    lines.push('', '1. (the stack has no AlarmTopicArn output: no alarm topic to subscribe to)');
  }
  const register = [
    'npm run -s cluster -- add', CLUSTER_ID_PLACEHOLDER,
    '--ssm-path', shellQuote(registrySsmPath), '--ssm-region', region, '--region', region,
    ...(apiUrl ? ['--api-url', shellQuote(apiUrl)] : []),
    '>', SECRET_FILE,
  ].join(' ');
  lines.push(
    '',
    '2. Register a cluster (its Secret goes to the file; the lines to install its forwarder to stderr):',
    `   ${register}`,
    '',
    '3. Install its forwarder, in that cluster:',
    `   kubectl create namespace ${FORWARDER_SECRET.namespace}`,
    `   kubectl apply -f ${SECRET_FILE}`,
    `   ${helmInstallLine({ clusterId: CLUSTER_ID_PLACEHOLDER, ...(apiUrl ? { backendUrl: apiUrl } : {}), secretName: FORWARDER_SECRET.name })}`,
  );
  if (outputs.MutualTlsApiUrl) {
    lines.push(
      '',
      `The API is behind mutual TLS at ${outputs.MutualTlsApiUrl}: point its DNS name at ${outputs.MutualTlsDomainTarget ?? 'the MutualTlsDomainTarget output'}, and give the forwarder a client certificate of the truststore (--set tls.clientCertSecret=<kubernetes.io/tls Secret>; docs/deploy.md, "Private networks").`,
    );
  }
  if (!apiUrl) lines.push('', 'The stack has no HttpApiUrl output: put the API\'s URL (`npx osls info`) in place of the placeholder.');
  return lines;
}
