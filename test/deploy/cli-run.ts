/** `npm run cluster` in process, its output captured: what the CLI tests run it with. */
import { runClusterCli, type CliIo } from '../../lib/cli/index.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with `argv`; stdout and stderr captured, the environment empty unless `io` says otherwise. */
export async function runCli(argv: readonly string[], io: Partial<Omit<CliIo, 'stdout' | 'stderr'>> = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runClusterCli(argv, { env: {}, ...io, stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}
