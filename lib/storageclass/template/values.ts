/**
 * The values a tag template computes with, and how Go prints and tests them. The driver's
 * data is a `*template.PVProps`; everything else a template can make is a Go string, int or
 * bool.
 */

/** The driver's `template.PVProps`: a volume's tag template data, `.` at the start. */
export interface PvTemplateData {
  PVCName: string;
  PVCNamespace: string;
  PVName: string;
}

/** The driver's `template.VolumeSnapshotProps`: a snapshot's tag template data (VolumeSnapshotClass). */
export interface SnapshotTemplateData {
  VolumeSnapshotName: string;
  VolumeSnapshotNamespace: string;
  VolumeSnapshotContentName: string;
}

/** The template's data: its fields, in the Go struct's order (as `%v` prints them). */
export type TemplateData = PvTemplateData | SnapshotTemplateData;

/** The data as a template value: a distinct object, so `typeof` tells it from the others. */
export class Props {
  constructor(readonly data: TemplateData) {}

  /** The Go type's name: `template.PVProps` or `template.VolumeSnapshotProps`. */
  get goType(): string {
    return 'PVName' in this.data ? 'template.PVProps' : 'template.VolumeSnapshotProps';
  }

  has(field: string): boolean {
    return Object.hasOwn(this.data, field);
  }

  get(field: string): string {
    return (this.data as unknown as Record<string, string>)[field] ?? '';
  }
}

/** A template value: a Go string, int (a safe integer here), bool, or the `*PVProps` data. */
export type Value = string | number | boolean | Props;

/** Parameter types of the template's functions, as Go's reflection sees them. */
export type ParamType = 'string' | 'int' | 'bool' | 'any';

/** The Go type name, as Go's error messages print it. */
export function typeName(value: Value): string {
  if (value instanceof Props) return `*${value.goType}`;
  if (typeof value === 'number') return 'int';
  if (typeof value === 'boolean') return 'bool';
  return 'string';
}

/** Go's `isTrue`: the zero value of its type is false (`""`, `0`, `false`); the data is true. */
export function truth(value: Value): boolean {
  if (value instanceof Props) return true;
  return value !== '' && value !== 0 && value !== false;
}

/**
 * What an action prints: text/template's `printValue`, which dereferences a pointer before
 * `fmt.Fprint` (so the data prints as `{name namespace pv}`).
 */
export function printValue(value: Value): string {
  if (value instanceof Props) return structText(value);
  return String(value);
}

/** `fmt`'s `%v` of a value passed to print/printf: the data is a pointer there, so `&{…}`. */
export function formatValue(value: Value): string {
  if (value instanceof Props) return `&${structText(value)}`;
  return String(value);
}

function structText({ data }: Props): string {
  return `{${Object.values(data).join(' ')}}`;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Go's `len(s)`: bytes of UTF-8, not characters. */
export function byteLength(s: string): number {
  return encoder.encode(s).length;
}

/**
 * Go's `s[start:end]` on a string, in bytes. A cut inside a multi-byte character gives Go an
 * invalid UTF-8 string that EC2 would store or reject unpredictably; volhook refuses it.
 * Bounds are the caller's business.
 */
export function byteSlice(s: string, start: number, end: number): string {
  const bytes = encoder.encode(s).subarray(start, end);
  try {
    return decoder.decode(bytes);
  } catch {
    throw new RangeError(`volhook refuses to cut ${JSON.stringify(s)} at bytes [${start}:${end}]: that splits a multi-byte character`);
  }
}

/** Byte offset of the UTF-16 offset `index` in `s` (for Go's strings.Index results). */
export function byteOffset(s: string, index: number): number {
  return index < 0 ? index : byteLength(s.slice(0, index));
}
