import { describe, expect, it } from 'vitest';
import { bucketFor, bucketForCall, bucketSpec, THROTTLING_BUCKETS } from '../../lib/ec2/throttling.js';
import { DEFAULT_BUCKETS, bucketSpecFor } from '../../lib/local/ec2/buckets.js';
import { ACTIONS } from '../../lib/local/ec2/actions.js';

describe('EC2 throttling buckets (reference/ebs.md)', () => {
  it.each([
    ['CreateVolume', 100, 5],
    ['DeleteVolume', 100, 5],
    ['CreateSnapshot', 100, 5],
    ['DeleteSnapshot', 100, 5],
    ['CreateTags', 100, 10],
    ['DeleteTags', 100, 10],
    ['AttachVolume', 50, 5],
    ['DetachVolume', 50, 5],
    ['ModifyVolume', 50, 5],
    ['DescribeVolumes', 100, 20],
    ['DescribeInstances', 100, 20],
    ['DescribeVolumes:unfiltered', 50, 10],
    ['DescribeInstances:unfiltered', 50, 10],
  ])('%s -> %i tokens, %i per second', (bucket, capacity, refillPerSecond) => {
    expect(bucketSpec(bucket)).toEqual({ capacity, refillPerSecond });
  });

  it('an action volhook calls -> its own bucket; unknown or bucket-only names -> refused, naming them', () => {
    expect(bucketFor('AttachVolume')).toBe('AttachVolume');
    expect(() => bucketFor('CreateFleet')).toThrow(/"CreateFleet"/);
    expect(() => bucketFor('DescribeVolumes:unfiltered')).toThrow(/no EC2 throttling bucket/);
    expect(() => bucketSpec('Nope')).toThrow(/"Nope"/);
  });

  it('describes without IDs, filters or pagination -> the :unfiltered bucket; others -> their own', () => {
    expect(bucketForCall('DescribeVolumes', ['Action', 'Version'])).toBe('DescribeVolumes:unfiltered');
    expect(bucketForCall('DescribeVolumes', ['VolumeId.1'])).toBe('DescribeVolumes');
    expect(bucketForCall('DescribeInstances', ['NextToken'])).toBe('DescribeInstances');
    expect(bucketForCall('DescribeAvailabilityZones', [])).toBe('DescribeAvailabilityZones');
    expect(bucketForCall('CreateVolume', [])).toBe('CreateVolume');
  });

  it('the simulator enforces the same table, and has a bucket for every action it serves', () => {
    expect(DEFAULT_BUCKETS).toBe(THROTTLING_BUCKETS);
    for (const action of Object.keys(ACTIONS)) expect(bucketSpecFor(bucketFor(action))).toEqual(bucketSpec(action));
    expect(bucketSpecFor('CreateVolume', { CreateVolume: { capacity: 2, refillPerSecond: 1 } })).toEqual({ capacity: 2, refillPerSecond: 1 });
  });
});
