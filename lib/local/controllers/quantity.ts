/**
 * Kubernetes resource quantities (`20Gi`, `500M`, `1.5Ti`, `1e9`, plain bytes) as numbers of
 * bytes, enough to compare a claim's request with a volume's capacity. Doubles hold every
 * size EBS offers exactly.
 */

const SUFFIX: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?\d+))?$/;

/**
 * Parses a quantity into bytes.
 * @example parseQuantity('20Gi') === 21474836480; parseQuantity('1.5k') === 1500
 * @throws Error when the text is not a quantity, so a typo never reads as zero.
 */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === 'number') {
    if (!Number.isFinite(quantity)) throw new Error(`quantity ${quantity} is not finite`);
    return quantity;
  }
  const match = QUANTITY.exec(quantity.trim());
  if (!match) throw new Error(`quantity "${quantity}" is not a Kubernetes quantity`);
  const [, number = '', suffix = '', exponent] = match;
  const multiplier = exponent === undefined ? (SUFFIX[suffix] ?? 1) : 10 ** Number(exponent);
  return Number(number) * multiplier;
}

/** Like `parseQuantity`, but `undefined` for a missing or malformed quantity. */
export function tryParseQuantity(quantity: string | number | undefined): number | undefined {
  if (quantity === undefined) return undefined;
  try {
    return parseQuantity(quantity);
  } catch {
    return undefined;
  }
}
