/** The few git commands the release script and the skew test run, in one repository. */
import { execFileSync } from 'node:child_process';

export interface Git {
  /** stdout of `git <args>`, trimmed; throws GitError when git fails. */
  run(args: readonly string[]): string;
  /** stdout, or undefined when git exits non-zero (a ref that does not exist). */
  tryRun(args: readonly string[]): string | undefined;
  readonly cwd: string;
}

export class GitError extends Error {
  override readonly name = 'GitError';
}

export function gitIn(cwd: string): Git {
  const run = (args: readonly string[]): string => {
    try {
      return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trimEnd();
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr?.trim();
      throw new GitError(`git ${args.join(' ')} failed${stderr ? `: ${stderr}` : ''}`);
    }
  };
  return {
    cwd,
    run,
    tryRun(args) {
      try {
        return run(args);
      } catch (err) {
        if (err instanceof GitError) return undefined;
        throw err;
      }
    },
  };
}
