/**
 * Kubernetes quantities and EBS's whole GiB: the contract's floor (claims.ts compares sizes with
 * them), and lib/storageclass's, which imports them from here.
 */
import { ParameterError } from './parameter-error.js';

/**
 * `<sign?><number><suffix?>`, the grammar of a Kubernetes resource.Quantity: binary suffixes
 * (Ki…Ei), decimal SI suffixes (m, k, M…E) or a decimal exponent (`e3`, `E-2`). `1E` is
 * exa, `1E3` is 1000, `1e` is invalid — the same reading the API server gives.
 */
const QUANTITY =
  /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|[eE]([+-]?\d{1,4})|(m|k|M|G|T|P|E))?$/;

const BINARY_POWER: Record<string, bigint> = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n };
const DECIMAL_EXPONENT: Record<string, number> = { m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** Longer than any quantity a person writes; keeps hostile input from costing bigint time. */
const MAX_QUANTITY_LENGTH = 64;

const GIB = 1n << 30n;

/**
 * Bytes in a Kubernetes quantity, rounded up to a whole byte as Kubernetes does
 * (`Quantity.Value()`): "1.5Gi" → 1610612736, "1e9" → 1000000000, "500M" → 500000000,
 * "1500m" → 2. Exact (bigint), so "1Gi" plus one byte is never lost to floating point.
 * Negative quantities parse; refusing them is the caller's business.
 *
 * @throws ParameterError('storage', …) when `q` is not a quantity.
 */
export function parseQuantity(q: string): bigint {
  const match = q.length <= MAX_QUANTITY_LENGTH ? QUANTITY.exec(q) : null;
  if (!match) {
    throw new ParameterError('storage', `"${q.slice(0, MAX_QUANTITY_LENGTH)}" is not a Kubernetes quantity (e.g. "20Gi", "500M", "1.5Ti")`);
  }
  const [, sign, number = '', binary, exponent, decimal] = match;
  const [whole = '', fraction = ''] = number.split('.');
  let digits = BigInt(`${whole}${fraction}` || '0');
  let power10 = -fraction.length;
  if (binary) digits <<= BINARY_POWER[binary] ?? 0n;
  if (exponent) power10 += Number(exponent);
  if (decimal) power10 += DECIMAL_EXPONENT[decimal] ?? 0;

  let magnitude: bigint;
  let exact = true;
  if (power10 >= 0) {
    magnitude = digits * 10n ** BigInt(power10);
  } else {
    const divisor = 10n ** BigInt(-power10);
    magnitude = digits / divisor;
    exact = digits % divisor === 0n;
  }
  if (sign === '-') return -magnitude; // toward +∞: the dropped fraction makes it larger
  return exact ? magnitude : magnitude + 1n;
}

/**
 * Whole GiB needed to hold `bytes`: EBS sizes are whole GiB, and a claim must get at least
 * what it asked for, so 1 GiB + 1 byte → 2 and "1G" (10^9 bytes) → 1.
 *
 * @throws RangeError for negative input or a result beyond Number.MAX_SAFE_INTEGER.
 */
export function roundUpToGiB(bytes: bigint): number {
  const gib = ceilGiB(bytes);
  if (gib > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${bytes} bytes is too many GiB to count`);
  return Number(gib);
}

/** roundUpToGiB without the Number conversion, for range checks on absurd requests. */
export function ceilGiB(bytes: bigint): bigint {
  if (bytes < 0n) throw new RangeError(`cannot round a negative size (${bytes} bytes)`);
  return (bytes + GIB - 1n) / GIB;
}

/**
 * The PV's `spec.capacity.storage` for a size in GiB, in the binary-suffix form Kubernetes
 * and the external-provisioner write: 20 → "20Gi".
 *
 * @throws RangeError unless `sizeGiB` is a non-negative integer.
 */
export function formatGiB(sizeGiB: number): string {
  if (!Number.isSafeInteger(sizeGiB) || sizeGiB < 0) {
    throw new RangeError(`size must be a whole, non-negative number of GiB, not ${sizeGiB}`);
  }
  return `${sizeGiB}Gi`;
}
