import { describe, expect, it } from 'vitest';
import { parseQuantity, tryParseQuantity } from '../../../lib/local/controllers/index.js';

describe('parseQuantity', () => {
  it.each([
    ['20Gi', 20 * 2 ** 30],
    ['512Mi', 512 * 2 ** 20],
    ['4Ki', 4096],
    ['1Ti', 2 ** 40],
    ['1.5Gi', 1.5 * 2 ** 30],
    ['500M', 500e6],
    ['10G', 10e9],
    ['2k', 2000],
    ['1073741824', 2 ** 30],
    ['1e3', 1000],
    ['100m', 0.1],
  ])('%s -> %d bytes', (text, bytes) => {
    expect(parseQuantity(text)).toBe(bytes);
  });

  it('a number -> itself', () => {
    expect(parseQuantity(42)).toBe(42);
  });

  it.each(['', 'Gi', '10GB', '10 Gi', '1.2.3', 'ten'])('"%s" -> throws, never zero', (text) => {
    expect(() => parseQuantity(text)).toThrow(/not a Kubernetes quantity/);
    expect(tryParseQuantity(text)).toBeUndefined();
  });

  it('binary and decimal suffixes -> ordered as sizes', () => {
    expect(parseQuantity('1Gi')).toBeGreaterThan(parseQuantity('1G'));
  });
});
