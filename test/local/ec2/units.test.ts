import { describe, expect, it } from 'vitest';
import { TokenBucket, bucketName } from '../../../lib/local/ec2/buckets.js';
import { wildcardMatch } from '../../../lib/local/ec2/filters.js';
import { QueryParams, readFilters } from '../../../lib/local/ec2/query.js';
import { drawLatency, seededRandom } from '../../../lib/local/ec2/random.js';
import { errorXml, responseXml } from '../../../lib/local/ec2/xml.js';

describe('query parsing', () => {
  it('VolumeId.1 … VolumeId.10 -> listed in index order, not string order', () => {
    const body = Array.from({ length: 10 }, (_, i) => `VolumeId.${10 - i}=v${10 - i}`).join('&');
    expect(QueryParams.parse(body).list('VolumeId')).toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9', 'v10']);
  });

  it('Filter.N.Name / Filter.N.Value.M, URL-encoded -> filters with their values', () => {
    const p = QueryParams.parse('Filter.1.Name=tag%3Akubernetes.io%2Fcluster%2Fc1&Filter.1.Value.1=owned&Filter.2.Name=status&Filter.2.Value.2=b&Filter.2.Value.1=a');
    expect(readFilters(p)).toEqual([
      { name: 'tag:kubernetes.io/cluster/c1', values: ['owned'] },
      { name: 'status', values: ['a', 'b'] },
    ]);
  });
});

describe('wildcards', () => {
  it.each([
    ['vol-*', 'vol-123', true],
    ['vol-?', 'vol-12', false],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
    ['*.io/x', 'kubernetes.io/x', true],
    ['owned', 'owned ', false],
  ])('%s against %s -> %s', (pattern, value, expected) => {
    expect(wildcardMatch(pattern, value)).toBe(expected);
  });
});

describe('token bucket', () => {
  it('refills continuously: 0.5 s at 5/s after emptying -> 2 tokens, then refused; fractions carry over', () => {
    const b = new TokenBucket({ capacity: 3, refillPerSecond: 5 }, 0);
    expect([b.take(0, 1), b.take(0, 1), b.take(0, 1), b.take(0, 1)]).toEqual([true, true, true, false]);
    expect([b.take(500, 1), b.take(500, 1), b.take(500, 1)]).toEqual([true, true, false]);
    expect(b.take(599, 1)).toBe(false); // 0.5 + 0.495 tokens
    expect(b.take(600, 1)).toBe(true);
  });

  it('time scale 10 -> refills ten times faster, never past capacity', () => {
    const b = new TokenBucket({ capacity: 2, refillPerSecond: 5 }, 0);
    b.take(0, 10);
    b.take(0, 10);
    expect(b.take(20, 10)).toBe(true);
    expect(b.level(60_000, 10)).toBe(2);
  });

  it('DescribeVolumes with filters, ids or pagination -> filtered bucket; with none -> unfiltered', () => {
    expect(bucketName('DescribeVolumes', ['Action', 'Version'])).toBe('DescribeVolumes:unfiltered');
    expect(bucketName('DescribeVolumes', ['Filter.1.Name'])).toBe('DescribeVolumes');
    expect(bucketName('DescribeVolumes', ['VolumeId.1'])).toBe('DescribeVolumes');
    expect(bucketName('DescribeInstances', ['MaxResults'])).toBe('DescribeInstances');
    expect(bucketName('CreateVolume', [])).toBe('CreateVolume');
  });
});

describe('latency distribution', () => {
  it('lognormal median 1.5 s, p99 4 s -> sample quantiles within 10 percent', () => {
    const rng = seededRandom(7);
    const spec = { kind: 'lognormal' as const, medianMs: 1500, p99Ms: 4000, maxMs: 20_000 };
    const xs = Array.from({ length: 20_000 }, () => drawLatency(spec, rng)).sort((a, b) => a - b);
    expect(Math.abs((xs[10_000] as number) - 1500) / 1500).toBeLessThan(0.1);
    expect(Math.abs((xs[19_800] as number) - 4000) / 4000).toBeLessThan(0.1);
  });
});

describe('xml', () => {
  it('success body -> namespaced root, requestId first, arrays as item lists, text escaped', () => {
    const xml = responseXml('DescribeVolumes', 'r-1', { volumeSet: [{ volumeId: 'v', tagSet: [{ key: 'a<b', value: '&' }] }] });
    expect(xml).toContain('<DescribeVolumesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r-1</requestId>');
    expect(xml).toContain('<volumeSet><item><volumeId>v</volumeId><tagSet><item><key>a&lt;b</key><value>&amp;</value></item></tagSet></item></volumeSet>');
  });

  it('error body -> Response/Errors/Error with Code and Message, then RequestID', () => {
    expect(errorXml('X.Y', 'bad "x"', 'r-2')).toContain(
      '<Response><Errors><Error><Code>X.Y</Code><Message>bad &quot;x&quot;</Message></Error></Errors><RequestID>r-2</RequestID></Response>',
    );
  });
});
