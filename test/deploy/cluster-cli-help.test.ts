/**
 * The cluster CLI's help: the full usage on --help, each command's own on `<command> --help`,
 * printed from the table the parser reads (so every option it takes is in its command's help),
 * and argument errors in two lines rather than the whole usage.
 */
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES, COMMANDS, commandUsage, parseClusterArgs, REGISTRY_OPTIONS, runClusterCli, SHORT_USAGE, USAGE, type CommandName } from '../../lib/cli/index.js';
import type { OptionSpec } from '../../lib/cli/usage.js';

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runClusterCli(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {} });
  return { code, stdout, stderr };
}

/** The options a help text lists in its option rows (`  --name …`). */
function listed(help: string): string[] {
  return [...help.matchAll(/^ {2}(--[a-z-]+)(?= |$)/gm)].map((m) => m[1]!);
}

/** Every option any command takes, with its kind: what the check below tries on each command. */
const ALL_OPTIONS = new Map(
  [REGISTRY_OPTIONS, ...COMMAND_NAMES.map((c): Record<string, OptionSpec> => COMMANDS[c].options)].flatMap((options) =>
    Object.entries(options).map(([name, spec]) => [name, spec.kind] as const),
  ),
);

/** The parser takes `option` for `command` (it may refuse its value or its company, not the option itself). */
function accepts(command: CommandName, option: string): boolean {
  const arg = ALL_OPTIONS.get(option) === 'flag' ? option : `${option}=x`;
  try {
    parseClusterArgs([command, 'c1', arg], { AWS_REGION: 'us-east-1' });
    return true;
  } catch (err) {
    return !/^unknown option|does not apply to/.test((err as Error).message);
  }
}

describe('cluster CLI help', () => {
  it.each([['--help'], ['-h'], ['help']])('%s -> the full usage on stdout, exit 0', async (arg) => {
    const res = await cli(arg);
    expect(res).toEqual({ code: 0, stdout: USAGE, stderr: '' });
  });

  it('the full usage holds every command with all its options', () => {
    for (const command of COMMAND_NAMES) {
      expect(USAGE).toMatch(new RegExp(`^ {2}${command} <id>`, 'm'));
      for (const option of Object.keys(COMMANDS[command].options)) expect(USAGE, `${command} ${option}`).toContain(`  ${option}`);
    }
    expect(listed(USAGE)).toEqual(expect.arrayContaining([...ALL_OPTIONS.keys()]));
  });

  it.each(COMMAND_NAMES.flatMap((command) => [[command, '--help'], [command, '-h']]))('%s %s -> that command\'s usage, exit 0', async (command, flag) => {
    const res = await cli(command, flag);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    expect(res.stdout).toBe(commandUsage(command as CommandName));
    expect(res.stdout).toMatch(new RegExp(`^usage: npm run cluster -- ${command} <cluster-id>`));
    expect(res.stdout).not.toBe(USAGE);
  });

  it('help <command> -> that command\'s usage; help <unknown> -> exit 2', async () => {
    expect(await cli('help', 'audit')).toEqual({ code: 0, stdout: commandUsage('audit'), stderr: '' });
    const bad = await cli('help', 'frobnicate');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown command "frobnicate"');
  });

  it.each(COMMAND_NAMES)('%s: the options its help lists are exactly those the parser takes for it', (command) => {
    const help = listed(commandUsage(command));
    const taken = [...ALL_OPTIONS.keys()].filter((option) => accepts(command, option));
    expect(taken.length).toBeGreaterThanOrEqual(Object.keys(REGISTRY_OPTIONS).length);
    expect([...new Set(help)].sort()).toEqual(taken.sort());
  });

  it('the parser check can tell: --region is taken by add, refused by rotate-secret, and so listed', () => {
    expect(accepts('add', '--region')).toBe(true);
    expect(accepts('rotate-secret', '--region')).toBe(false);
    expect(listed(commandUsage('add'))).toContain('--region');
    expect(listed(commandUsage('rotate-secret'))).not.toContain('--region');
  });

  it('--help among other arguments -> help, nothing written; -h as the value of an option is that value', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'volhook-cli-help-')), 'clusters.json');
    expect(await cli('add', 'c1', '--region', 'us-east-1', '--file', file, '--help')).toEqual({ code: 0, stdout: commandUsage('add'), stderr: '' });
    expect(() => statSync(file)).toThrow();
    // Control: the same invocation without --help registers.
    expect((await cli('add', 'c1', '--region', 'us-east-1', '--file', file)).code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).clusters.c1.region).toBe('us-east-1');

    const asValue = await cli('show', 'c1', '--file', '-h');
    expect(asValue.code).toBe(2);
    expect(asValue.stderr).toContain('--file needs a value');
    expect(asValue.stdout).toBe('');
  });
});

describe('cluster CLI without a command', () => {
  it('-> one usage line naming every command, on stderr, exit 2', async () => {
    const res = await cli();
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(`${SHORT_USAGE}\n`);
    expect(SHORT_USAGE).toBe(`usage: npm run cluster -- <command> [options]; commands: ${COMMAND_NAMES.join(', ')}; --help for more`);
    expect(COMMAND_NAMES).toEqual(expect.arrayContaining(['add', 'rotate-secret', 'remove', 'show', 'adopt', 'audit']));
  });
});
