/**
 * The functions a tag template can call: the EBS CSI driver's function map
 * (pkg/util/template/funcs.go at v1.64.0) laid over the text/template builtins it leaves in
 * place. Signatures are Go's, because Go checks argument types against them: `substring`
 * takes (int, int, string), so `substring "0" 4 .PVCName` is an error there and here.
 */
import { ExecError } from './errors.js';
import { sprint, sprintf, sprintln } from './fmt.js';
import { byteLength, byteOffset, byteSlice, Props, truth, typeName, type ParamType, type Value } from './values.js';

export interface TemplateFunction {
  params: readonly ParamType[];
  /** The type of each further argument, for Go's variadic functions. */
  variadic?: ParamType;
  /** Throws ExecError for the function's own errors, as Go's `error calling NAME: …`. */
  call(args: readonly Value[]): Value;
}

/** The driver disables these by mapping them to functions that always fail. */
const disabled = (name: string): TemplateFunction => ({
  params: [],
  variadic: 'any',
  call: () => {
    throw new ExecError(`cannot call '${name}' function`);
  },
});

const str = (v: Value) => v as string;
const int = (v: Value) => v as number;

/** Go's runtime panic text, which text/template turns into the call's error. */
const sliceBounds = (bounds: string, length?: number) =>
  new ExecError(`runtime error: slice bounds out of range [${bounds}]${length === undefined ? '' : ` with length ${length}`}`);

/**
 * The driver's `substring(start, end, s)`: byte offsets; a negative start means "from 0 to
 * end", an end past the string or negative means "to the end". Go panics on what is still
 * out of range; the panic becomes the call's error.
 */
function substring(start: number, end: number, s: string): string {
  const length = byteLength(s);
  if (start < 0) {
    if (end < 0 || end > length) throw sliceBounds(`:${end}`, end < 0 ? undefined : length);
    return byteSlice(s, 0, end);
  }
  if (end < 0 || end > length) {
    if (start > length) throw sliceBounds(`${start}:${length}`);
    return byteSlice(s, start, length);
  }
  if (start > end) throw sliceBounds(`${start}:${end}`);
  return byteSlice(s, start, end);
}

/** The driver's `field(delim, idx, s)`: `strings.Split(s, delim)[idx]`. */
function field(delim: string, idx: number, s: string): string {
  const words = delim === '' ? [...s] : s.split(delim);
  if (idx < 0) throw new ExecError(`runtime error: index out of range [${idx}]`);
  if (idx >= words.length) {
    throw new ExecError(`extractWord: cannot index into split string; index = ${idx}, length = ${words.length}`);
  }
  return words[idx]!;
}

/**
 * Go's strings.ToUpper / ToLower map each character by Unicode's simple (one-to-one) case
 * mapping, where JavaScript uses the full mapping ("ß" → "SS"). A character whose full
 * mapping is longer than one has no simple mapping and stays as it is — except the few
 * that have both, which volhook cannot tell apart without Unicode's tables and so refuses.
 */
function mapCase(s: string, upper: boolean): string {
  let out = '';
  for (const c of s) {
    if (!upper && c === '\u0130') {
      out += 'i'; // İ: simple lower case "i", full "i̇"
      continue;
    }
    const mapped = upper ? c.toUpperCase() : c.toLowerCase();
    if ([...mapped].length === 1) {
      out += mapped;
      continue;
    }
    const code = c.codePointAt(0)!;
    if (code >= 0x1f80 && code <= 0x1fff) {
      throw new ExecError(`volhook cannot change the case of ${JSON.stringify(c)} exactly as Go does`);
    }
    out += c;
  }
  return out;
}

/** Go's basic kinds for comparison: strings, ints and bools compare within their kind. */
function kind(v: Value): string {
  return v instanceof Props ? 'pointer' : typeof v;
}

const badComparison = () => new ExecError('incompatible types for comparison');

function eq(arg1: Value, ...rest: Value[]): boolean {
  if (rest.length === 0) throw new ExecError('missing argument for comparison');
  for (const arg of rest) {
    if (kind(arg) !== kind(arg1)) throw badComparison();
    const same = arg1 instanceof Props && arg instanceof Props ? arg1.data === arg.data : arg1 === arg;
    if (same) return true;
  }
  return false;
}

function lt(a: Value, b: Value): boolean {
  if (a instanceof Props || b instanceof Props) throw new ExecError('invalid type for comparison');
  if (kind(a) !== kind(b)) throw badComparison();
  if (typeof a === 'boolean') throw new ExecError('invalid type for comparison');
  if (typeof a === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b as string)) < 0;
  return a < (b as number);
}

function len(v: Value): number {
  if (typeof v === 'string') return byteLength(v);
  throw new ExecError(`len of type ${v instanceof Props ? v.goType : typeName(v)}`);
}

function slice(item: Value, ...indexes: Value[]): string {
  if (typeof item !== 'string') throw new ExecError(`can't slice item of type ${typeName(item)}`);
  if (indexes.length > 3) throw new ExecError(`too many slice indexes: ${indexes.length}`);
  if (indexes.length === 3) throw new ExecError('cannot 3-index slice a string');
  const length = byteLength(item);
  const idx = [0, length];
  indexes.forEach((index, i) => {
    if (typeof index !== 'number') throw new ExecError(`cannot index slice/array with type ${typeName(index)}`);
    if (index < 0 || index > length) throw new ExecError(`index out of range: ${index}`);
    idx[i] = index;
  });
  if (idx[0]! > idx[1]!) throw new ExecError(`invalid slice index: ${idx[0]} > ${idx[1]}`);
  return byteSlice(item, idx[0]!, idx[1]!);
}

/**
 * Every function name a template may use. A name not here is a parse error, as Go's
 * `function "x" not defined`. `and` and `or` are listed for their arity; the evaluator runs
 * them itself, because they stop at the first deciding argument.
 */
export const FUNCTIONS: Readonly<Record<string, TemplateFunction>> = {
  // The driver's map.
  html: disabled('html'),
  js: disabled('js'),
  call: disabled('call'),
  urlquery: disabled('urlquery'),
  contains: { params: ['string', 'string'], call: ([sub, s]) => str(s!).includes(str(sub!)) },
  toUpper: { params: ['string'], call: ([s]) => mapCase(str(s!), true) },
  toLower: { params: ['string'], call: ([s]) => mapCase(str(s!), false) },
  substring: { params: ['int', 'int', 'string'], call: ([start, end, s]) => substring(int(start!), int(end!), str(s!)) },
  field: { params: ['string', 'int', 'string'], call: ([delim, idx, s]) => field(str(delim!), int(idx!), str(s!)) },
  index: { params: ['string', 'string'], call: ([sub, s]) => byteOffset(str(s!), str(s!).indexOf(str(sub!))) },
  lastIndex: { params: ['string', 'string'], call: ([sub, s]) => byteOffset(str(s!), str(s!).lastIndexOf(str(sub!))) },
  // text/template's builtins the driver leaves in place.
  and: { params: ['any'], variadic: 'any', call: () => false },
  or: { params: ['any'], variadic: 'any', call: () => false },
  not: { params: ['any'], call: ([v]) => !truth(v!) },
  len: { params: ['any'], call: ([v]) => len(v!) },
  slice: { params: ['any'], variadic: 'any', call: ([item, ...indexes]) => slice(item!, ...indexes) },
  print: { params: [], variadic: 'any', call: (args) => sprint(args) },
  println: { params: [], variadic: 'any', call: (args) => sprintln(args) },
  printf: { params: ['string'], variadic: 'any', call: ([format, ...args]) => sprintf(str(format!), args) },
  eq: { params: ['any'], variadic: 'any', call: ([a, ...rest]) => eq(a!, ...rest) },
  ne: { params: ['any', 'any'], call: ([a, b]) => !eq(a!, b!) },
  lt: { params: ['any', 'any'], call: ([a, b]) => lt(a!, b!) },
  le: { params: ['any', 'any'], call: ([a, b]) => lt(a!, b!) || eq(a!, b!) },
  gt: { params: ['any', 'any'], call: ([a, b]) => !(lt(a!, b!) || eq(a!, b!)) },
  ge: { params: ['any', 'any'], call: ([a, b]) => !lt(a!, b!) },
};

export function isFunction(name: string): boolean {
  return Object.hasOwn(FUNCTIONS, name);
}
