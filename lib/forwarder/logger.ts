/** A tiny JSON logger: one line per event on stdout, `{time, level, msg, ...fields}`. */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createJsonLogger(
  options: { level?: LogLevel; write?: (line: string) => void; base?: LogFields } = {},
): Logger {
  const min = LEVELS[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stdout.write(line));
  const log = (level: LogLevel) => (msg: string, fields?: LogFields) => {
    if (LEVELS[level] < min) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...options.base, ...fields }, errorReplacer)}\n`);
  };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}
