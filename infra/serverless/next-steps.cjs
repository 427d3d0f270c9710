'use strict';
/**
 * After `osls deploy` (and `osls info`): the stack's outputs as the next commands to run —
 * subscribe to the alarms, register a cluster, install its forwarder. The lines come from
 * lib/cli/next-steps.ts (loaded through tsx), so they are the ones `cluster add` prints.
 */
const { pathToFileURL } = require('node:url');
const { join } = require('node:path');

class NextSteps {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      'after:deploy:deploy': () => this.print(),
      'after:info:info': () => this.print(),
    };
  }

  async outputs() {
    const provider = this.serverless.getProvider('aws');
    const described = await provider.request('CloudFormation', 'describeStacks', { StackName: provider.naming.getStackName() });
    const stack = (described.Stacks || [])[0];
    return Object.fromEntries(((stack && stack.Outputs) || []).map((o) => [o.OutputKey, o.OutputValue]));
  }

  async print() {
    const provider = this.serverless.getProvider('aws');
    const { tsImport } = await import('tsx/esm/api');
    const root = this.serverless.serviceDir || process.cwd();
    const { deployNextSteps } = await tsImport(pathToFileURL(join(root, 'lib/cli/next-steps.ts')).href, pathToFileURL(__filename).href);
    const environment = this.serverless.service.provider.environment || {};
    const lines = deployNextSteps({
      outputs: await this.outputs(),
      stage: provider.getStage(),
      region: provider.getRegion(),
      registrySsmPath: environment.VOLHOOK_REGISTRY_SSM_PATH,
    });
    process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}

module.exports = NextSteps;
