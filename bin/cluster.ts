/** `npm run cluster -- add|rotate-secret|remove|show|adopt|audit|release <id> [options]`; see lib/cli/cluster.ts. */
import { createInterface } from 'node:readline/promises';
import { runClusterCli } from '../lib/cli/index.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.exitCode = await runClusterCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  interactive: process.stdin.isTTY === true,
  async ask(question) {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return await rl.question(question);
    } finally {
      rl.close();
    }
  },
});
