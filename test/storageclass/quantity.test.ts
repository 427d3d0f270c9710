import { describe, expect, it } from 'vitest';
import { formatGiB, parseQuantity, ParameterError, roundUpToGiB } from '../../lib/storageclass/index.js';
import { expectParameterError } from './helpers.js';

const GiB = 1024n ** 3n;

describe('parseQuantity', () => {
  it.each([
    { q: '0', bytes: 0n },
    { q: '1', bytes: 1n },
    { q: '1Ki', bytes: 1024n },
    { q: '1Mi', bytes: 1024n ** 2n },
    { q: '20Gi', bytes: 20n * GiB },
    { q: '1Ti', bytes: 1024n ** 4n },
    { q: '1Pi', bytes: 1024n ** 5n },
    { q: '1Ei', bytes: 1024n ** 6n },
    { q: '1k', bytes: 1000n },
    { q: '500M', bytes: 500_000_000n },
    { q: '1G', bytes: 1_000_000_000n },
    { q: '2T', bytes: 2_000_000_000_000n },
    { q: '1P', bytes: 10n ** 15n },
    { q: '1E', bytes: 10n ** 18n },
    { q: '1e9', bytes: 1_000_000_000n },
    { q: '1E3', bytes: 1000n },
    { q: '2.5e3', bytes: 2500n },
    { q: '1e+3', bytes: 1000n },
    { q: '1.5Gi', bytes: 1_610_612_736n },
    { q: '.5Ki', bytes: 512n },
    { q: '1.', bytes: 1n },
    { q: '+1k', bytes: 1000n },
    { q: '1073741825', bytes: GiB + 1n },
    { q: '1500m', bytes: 2n },
    { q: '0.1', bytes: 1n },
    { q: '1e-3', bytes: 1n },
    { q: '-1Ki', bytes: -1024n },
    { q: '-1.5', bytes: -1n },
  ])('"$q" -> $bytes bytes', ({ q, bytes }) => {
    expect(parseQuantity(q)).toBe(bytes);
  });

  it.each(['', 'Gi', '1GB', '1gi', '1K', '1 Gi', ' 1Gi', '1e', '1.2.3', '0x10', '1KiB', 'ten', '1e99999', '1'.repeat(65)])(
    'invalid "%s" -> ParameterError naming storage',
    (q) => {
      expectParameterError(() => parseQuantity(q), 'storage', /not a Kubernetes quantity/);
    },
  );
});

describe('roundUpToGiB', () => {
  it.each([
    { bytes: 0n, gib: 0 },
    { bytes: 1n, gib: 1 },
    { bytes: GiB - 1n, gib: 1 },
    { bytes: GiB, gib: 1 },
    { bytes: GiB + 1n, gib: 2 },
    { bytes: 1500n * 1024n ** 2n, gib: 2 },
    { bytes: 1_000_000_000n, gib: 1 },
    { bytes: 65_536n * GiB, gib: 65_536 },
  ])('$bytes bytes -> $gib GiB', ({ bytes, gib }) => {
    expect(roundUpToGiB(bytes)).toBe(gib);
  });

  it('negative bytes -> RangeError, not a silent 0', () => {
    expect(() => roundUpToGiB(-1n)).toThrow(RangeError);
  });

  it('more GiB than a safe integer -> RangeError', () => {
    expect(() => roundUpToGiB(10n ** 30n)).toThrow(RangeError);
  });
});

describe('formatGiB', () => {
  it.each([
    { gib: 1, text: '1Gi' },
    { gib: 20, text: '20Gi' },
    { gib: 65_536, text: '65536Gi' },
  ])('$gib -> "$text"', ({ gib, text }) => {
    expect(formatGiB(gib)).toBe(text);
  });

  it.each([1.5, -1, Number.NaN, Number.POSITIVE_INFINITY])('%s -> RangeError', (gib) => {
    expect(() => formatGiB(gib)).toThrow(RangeError);
  });
});

describe('ParameterError', () => {
  it('constructed -> parameter kept, message starts with it, name set', () => {
    const error = new ParameterError('iops', 'is wrong');
    expect(error).toBeInstanceOf(Error);
    expect(error.parameter).toBe('iops');
    expect(error.message).toBe('iops: is wrong');
    expect(error.name).toBe('ParameterError');
  });
});
