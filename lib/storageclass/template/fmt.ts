/**
 * The part of Go's fmt that `print`, `println` and `printf` need in a tag template. printf
 * takes the verbs %v %s %d %t %q %x %X and %%, with the `-` flag, the `0` flag for integers,
 * and a width. Where Go would print an error marker into the text (`%!d(string=x)`, a missing
 * or extra argument), or for any other verb or flag, volhook refuses the template instead of
 * tagging the volume with that marker.
 */
import { ExecError } from './errors.js';
import { formatValue, Props, typeName, type Value } from './values.js';

/** Go's fmt.Sprint: a space between two operands when neither is a string. */
export function sprint(args: readonly Value[]): string {
  let out = '';
  args.forEach((arg, i) => {
    if (i > 0 && typeof arg !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(arg);
  });
  return out;
}

/** Go's fmt.Sprintln: spaces between all operands, and a newline. */
export function sprintln(args: readonly Value[]): string {
  return `${args.map(formatValue).join(' ')}\n`;
}

/** Longest padding volhook writes: a tag value holds at most 256 characters anyway. */
const MAX_WIDTH = 256;

const VERB = /%([-+# 0]*)(\d*)(\.\d*)?(\[[^\]]*\])?(.)?/gsu;

/** Go's fmt.Sprintf for the verbs above; anything else is an ExecError. */
export function sprintf(format: string, args: readonly Value[]): string {
  let next = 0;
  const out = format.replace(VERB, (whole, flags: string, width: string, precision?: string, argIndex?: string, verb?: string) => {
    if (verb === undefined) throw new ExecError(`printf: format ${JSON.stringify(format)} ends in a lone %`);
    if (verb === '%' && whole === '%%') return '%';
    if (precision !== undefined || argIndex !== undefined || /[+# ]/.test(flags) || verb === '%') {
      throw new ExecError(`printf: volhook supports %v %s %d %t %q %x %X %% with a width and the - or 0 flag, not ${JSON.stringify(whole)}`);
    }
    const n = width === '' ? 0 : Number(width);
    if (n > MAX_WIDTH) throw new ExecError(`printf: width ${width} is more than a tag value's ${MAX_WIDTH} characters`);
    if (next >= args.length) throw new ExecError(`printf: ${JSON.stringify(whole)} has no argument (Go would print %!${verb}(MISSING))`);
    const arg = args[next++]!;
    const text = formatArg(verb, arg, whole);
    const left = flags.includes('-');
    const zero = flags.includes('0') && !left;
    if (zero && typeof arg !== 'number') {
      throw new ExecError(`printf: volhook supports the 0 flag only for integers, not in ${JSON.stringify(whole)} with a ${typeName(arg)}`);
    }
    return pad(text, n, left, zero);
  });
  if (next < args.length) {
    throw new ExecError(`printf: ${args.length - next} argument(s) more than ${JSON.stringify(format)} uses (Go would print %!(EXTRA …))`);
  }
  return out;
}

function formatArg(verb: string, arg: Value, whole: string): string {
  const wrongType = () =>
    new ExecError(`printf: ${JSON.stringify(whole)} does not take a ${typeName(arg)} (Go would print %!${verb}(${typeName(arg)}=${formatValue(arg)}))`);
  switch (verb) {
    case 'v':
      return formatValue(arg);
    case 's':
      if (typeof arg === 'string' || arg instanceof Props) return formatValue(arg);
      throw wrongType();
    case 'd':
      if (typeof arg === 'number') return String(arg);
      throw wrongType();
    case 't':
      if (typeof arg === 'boolean') return String(arg);
      throw wrongType();
    case 'q':
      if (typeof arg === 'string') return goQuote(arg);
      throw wrongType();
    case 'x':
    case 'X': {
      let hex: string;
      if (typeof arg === 'number') hex = arg.toString(16);
      else if (typeof arg === 'string') hex = Buffer.from(arg, 'utf8').toString('hex');
      else throw wrongType();
      return verb === 'X' ? hex.toUpperCase() : hex;
    }
    default:
      throw new ExecError(`printf: volhook supports %v %s %d %t %q %x %X %%, not ${JSON.stringify(whole)}`);
  }
}

/** Pads to `width` characters (runes, as fmt counts them); zeros go after a minus sign. */
function pad(text: string, width: number, left: boolean, zero: boolean): string {
  const missing = width - [...text].length;
  if (missing <= 0) return text;
  if (left) return text + ' '.repeat(missing);
  if (zero) return text.startsWith('-') ? `-${'0'.repeat(missing)}${text.slice(1)}` : '0'.repeat(missing) + text;
  return ' '.repeat(missing) + text;
}

// Built on first use: V8 takes ~0.6 ms to build this \p{…} class, which every cold start of
// the function would pay while only a template using %q needs it.
let printable: RegExp | undefined;
const isPrintable = (c: string) => (printable ??= /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u).test(c);
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };

/** Go's strconv.Quote: printable characters as they are, the rest escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const c of s) {
    const code = c.codePointAt(0)!;
    if (c === '"' || c === '\\') out += `\\${c}`;
    else if (isPrintable(c)) out += c;
    else if (SHORT_ESCAPES[c]) out += SHORT_ESCAPES[c];
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code < 0x10000) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}
