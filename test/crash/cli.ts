/**
 * `npm run test:crash -- [--points N] [--seed S] [--failures N]`: the long crash exploration
 * (default 3,000 points from seed 1); prints the table of counts and the time, and the first
 * failing runs. Exits 1 when any count is not 0.
 *
 * `npm run test:crash -- --seed S` (without --points): replays the one run S — the seed a
 * failure report names — and prints its lifecycle, crash points, findings and trace.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

import { parseArgs } from 'node:util';
import { explore, formatFailures, formatRun, formatSummary } from './explore.js';
import { failed, runOnce } from './run.js';

const USAGE = `usage: npm run test:crash -- [--points N] [--seed S] [--failures N]
       npm run test:crash -- --seed S          replay run S with its trace`;

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} must be a whole number, got "${value}"\n${USAGE}`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      points: { type: 'string' },
      seed: { type: 'string' },
      failures: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const seed = positiveInt('seed', values.seed, 1);

  if (values.seed !== undefined && values.points === undefined) {
    const report = await runOnce(seed);
    console.log(formatRun(report).join('\n'));
    console.log(`\n  ${report.steps} steps, ${report.requests} requests, ${report.ms.toFixed(0)} ms, trace ${report.traceHash}\n\ntrace (step, event):`);
    console.log(report.trace.map((line) => `  ${line}`).join('\n'));
    return failed(report) ? 1 : 0;
  }

  const points = positiveInt('points', values.points, 3000);
  const maxFailures = positiveInt('failures', values.failures, 20);
  let lastPrint = 0;
  const summary = await explore({
    points,
    seed,
    onRun: (report, s) => {
      if (failed(report)) console.log(`seed ${report.seed} FAILED: ${report.findings[0] ?? ''}`);
      if (s.ms - lastPrint > 10_000) {
        lastPrint = s.ms;
        console.log(`… ${s.points}/${points} crash points, ${s.runs} runs, ${s.failures.length} failing, ${(s.ms / 1000).toFixed(0)} s`);
      }
    },
  });
  console.log('');
  console.log(formatSummary(summary));
  console.log('');
  console.log(formatFailures(summary, maxFailures));
  return summary.failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
