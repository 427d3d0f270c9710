/** `npm run cluster -- add|rotate-secret|remove|show|adopt <id> [options]`; see lib/cli/cluster.ts and lib/cli/adopt.ts. */
import { runClusterCli } from '../lib/cli/index.js';

process.exitCode = await runClusterCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
