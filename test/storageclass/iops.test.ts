import { describe, expect, it } from 'vitest';
import { capIops, describeIopsAdjustment, VOLUME_TYPE_LIMITS } from '../../lib/storageclass/index.js';
import { expectParameterError, spec } from './helpers.js';

describe('IOPS worked examples of ebs.md', () => {
  it.each([
    { name: 'io1 4 GiB, iopsPerGB 1, auto-increase -> raised to the minimum 100', type: 'io1', size: '4Gi', extra: { iopsPerGB: '1', allowAutoIOPSPerGBIncrease: 'true' }, iops: 100 },
    { name: 'io1 4 GiB, iopsPerGB 10000 -> capped to 50/GiB = 200', type: 'io1', size: '4Gi', extra: { iopsPerGB: '10000' }, iops: 200 },
    { name: 'io2 4 GiB, iopsPerGB 10000 -> capped to 1000/GiB = 4000', type: 'io2', size: '4Gi', extra: { iopsPerGB: '10000' }, iops: 4_000 },
    { name: 'gp3 10 GiB, iops 16000 -> capped to 500/GiB = 5000', type: 'gp3', size: '10Gi', extra: { iops: '16000' }, iops: 5_000 },
  ])('$name', ({ type, size, extra, iops }) => {
    expect(spec({ type, ...extra }, { requestStorage: size }).iops).toBe(iops);
  });
});

describe('IOPS per-type table (min / max / max per GiB)', () => {
  it.each([
    // gp3: min 3,000, max 80,000, 500 per GiB
    { name: 'gp3 at its minimum 3000 -> kept', type: 'gp3', size: '100Gi', iops: '3000', auto: false, result: 3_000 },
    { name: 'gp3 below minimum with auto-increase -> 3000', type: 'gp3', size: '100Gi', iops: '1000', auto: true, result: 3_000 },
    { name: 'gp3 above max 80000 on a large volume -> 80000', type: 'gp3', size: '200Gi', iops: '100000', auto: false, result: 80_000 },
    { name: 'gp3 at max 80000 on a large volume -> kept', type: 'gp3', size: '200Gi', iops: '80000', auto: false, result: 80_000 },
    { name: 'gp3 20000 on 100 GiB -> kept (not the old 16000 maximum)', type: 'gp3', size: '100Gi', iops: '20000', auto: false, result: 20_000 },
    { name: 'gp3 above 500/GiB on 8 GiB -> 4000', type: 'gp3', size: '8Gi', iops: '4001', auto: false, result: 4_000 },
    { name: 'gp3 500/GiB bound below minimum (4 GiB) -> not applied, kept', type: 'gp3', size: '4Gi', iops: '16000', auto: false, result: 16_000 },
    { name: 'gp3 iopsPerGB 500 on 20 GiB -> 10000', type: 'gp3', size: '20Gi', iopsPerGB: '500', auto: false, result: 10_000 },
    // io1: min 100, max 64,000, 50 per GiB
    { name: 'io1 at its minimum 100 -> kept', type: 'io1', size: '10Gi', iops: '100', auto: false, result: 100 },
    { name: 'io1 below minimum with auto-increase -> 100', type: 'io1', size: '10Gi', iops: '50', auto: true, result: 100 },
    { name: 'io1 above max 64000 on 2000 GiB -> 64000', type: 'io1', size: '2000Gi', iops: '70000', auto: false, result: 64_000 },
    { name: 'io1 above 50/GiB on 100 GiB -> 5000', type: 'io1', size: '100Gi', iops: '6000', auto: false, result: 5_000 },
    { name: 'io1 at exactly 50/GiB -> kept', type: 'io1', size: '100Gi', iops: '5000', auto: false, result: 5_000 },
    // io2: min 100, max 256,000, 1,000 per GiB
    { name: 'io2 at its minimum 100 -> kept', type: 'io2', size: '10Gi', iops: '100', auto: false, result: 100 },
    { name: 'io2 below minimum with auto-increase -> 100', type: 'io2', size: '10Gi', iops: '1', auto: true, result: 100 },
    { name: 'io2 above max 256000 on 1000 GiB -> 256000', type: 'io2', size: '1000Gi', iops: '300000', auto: false, result: 256_000 },
    { name: 'io2 above 1000/GiB on 10 GiB -> 10000', type: 'io2', size: '10Gi', iops: '20000', auto: false, result: 10_000 },
  ])('$name', ({ type, size, iops, iopsPerGB, auto, result }) => {
    const parameters: Record<string, string> = { type };
    if (iops) parameters.iops = iops;
    if (iopsPerGB) parameters.iopsPerGB = iopsPerGB;
    if (auto) parameters.allowAutoIOPSPerGBIncrease = 'true';
    expect(spec(parameters, { requestStorage: size }).iops).toBe(result);
  });

  it('limits table -> matches ebs.md', () => {
    expect(VOLUME_TYPE_LIMITS.gp3.iops).toMatchObject({ min: 3_000, max: 80_000, maxPerGiB: 500 });
    expect(VOLUME_TYPE_LIMITS.io1.iops).toMatchObject({ min: 100, max: 64_000, maxPerGiB: 50 });
    expect(VOLUME_TYPE_LIMITS.io2.iops).toMatchObject({ min: 100, max: 256_000, maxPerGiB: 1_000 });
    for (const type of ['gp2', 'st1', 'sc1', 'standard'] as const) expect(VOLUME_TYPE_LIMITS[type].iops).toBeUndefined();
  });
});

describe('capIops', () => {
  const io1 = { min: 100, max: 64_000, maxPerGiB: 50 };
  it.each([
    { name: 'below min without auto-increase -> undefined (too low)', requested: 99, size: 10, auto: false, result: undefined },
    { name: 'below min with auto-increase -> min', requested: 4, size: 4, auto: true, result: 100 },
    { name: 'above max, per-GiB bound higher -> max', requested: 100_000, size: 2_000, auto: false, result: 64_000 },
    { name: 'above per-GiB bound -> per-GiB bound', requested: 40_000, size: 4, auto: false, result: 200 },
    { name: 'per-GiB bound below min -> not applied', requested: 150, size: 1, auto: false, result: 150 },
    { name: 'raised to min, then within per-GiB bound -> min', requested: 1, size: 2, auto: true, result: 100 },
  ])('$name', ({ requested, size, auto, result }) => {
    expect(capIops(requested, size, io1, auto)).toBe(result);
  });
});

describe('IOPS parameters refused', () => {
  it.each([
    { name: 'iops and iopsPerGB together -> error naming iopsPerGB', parameters: { type: 'io1', iops: '1000', iopsPerGB: '10' }, key: 'iopsPerGB', problem: /cannot be combined with "iops"/ },
    { name: 'iops on gp2 -> error naming iops', parameters: { type: 'gp2', iops: '3000' }, key: 'iops', problem: /gp2 has no IOPS setting/ },
    { name: 'iops on st1 -> error naming iops', parameters: { type: 'st1', iops: '3000' }, key: 'iops', problem: /st1 has no IOPS setting/, size: '200Gi' },
    { name: 'iops on sc1 -> error naming iops', parameters: { type: 'sc1', iops: '3000' }, key: 'iops', problem: /sc1 has no IOPS setting/, size: '200Gi' },
    { name: 'iops on standard -> error naming iops', parameters: { type: 'standard', iops: '3000' }, key: 'iops', problem: /standard has no IOPS setting/ },
    { name: 'iopsPerGB on gp2 -> error naming iopsPerGB', parameters: { type: 'gp2', iopsPerGB: '10' }, key: 'iopsPerGB', problem: /gp2 has no IOPS setting/ },
    { name: 'iops below gp3 minimum without auto-increase -> error', parameters: { iops: '2999' }, key: 'iops', problem: /2999 IOPS is below the minimum of 3000 for gp3/ },
    { name: 'iopsPerGB result below io1 minimum without auto-increase -> error naming iopsPerGB', parameters: { type: 'io1', iopsPerGB: '1' }, key: 'iopsPerGB', problem: /1 × 10 GiB = 10 IOPS is below the minimum of 100/ },
    { name: 'auto-increase "True" is not "true" -> too low is still an error', parameters: { type: 'io1', iops: '50', allowAutoIOPSPerGBIncrease: 'True' }, key: 'iops', problem: /below the minimum/ },
    { name: 'iops fractional -> error', parameters: { type: 'io1', iops: '100.5' }, key: 'iops', problem: /"100.5" is not a whole number/ },
    { name: 'iops empty (the driver\'s ParseInt error) -> error', parameters: { type: 'io1', iops: '' }, key: 'iops', problem: /"" is not a whole number/ },
    { name: 'iops text -> error', parameters: { type: 'io1', iops: 'lots' }, key: 'iops', problem: /not a whole number/ },
    { name: 'iops with a space -> error', parameters: { type: 'io1', iops: ' 100' }, key: 'iops', problem: /not a whole number/ },
    { name: 'iops in exponent form -> error', parameters: { type: 'io1', iops: '1e3' }, key: 'iops', problem: /not a whole number/ },
    { name: 'iops beyond int32 -> error', parameters: { type: 'io1', iops: '2147483648' }, key: 'iops', problem: /out of range/ },
    { name: 'iopsPerGB fractional -> error', parameters: { type: 'io1', iopsPerGB: '0.5' }, key: 'iopsPerGB', problem: /not a whole number/ },
    { name: 'iopsPerGB empty -> error', parameters: { type: 'io1', iopsPerGB: '' }, key: 'iopsPerGB', problem: /not a whole number/ },
    { name: 'IOPS spelled in capitals -> error names the key as written', parameters: { type: 'gp2', IOPS: '3000' }, key: 'IOPS', problem: /no IOPS setting/ },
  ])('$name', ({ parameters, key, problem, size }) => {
    expectParameterError(() => spec(parameters, { requestStorage: size ?? '10Gi' }), key, problem);
  });
});

describe('IOPS values the driver reads as "not set"', () => {
  it.each([
    { name: 'iops "0" -> not set', parameters: { type: 'io2', iops: '0' } },
    { name: 'iops negative -> not set', parameters: { type: 'io2', iops: '-100' } },
    { name: 'iopsPerGB "0" -> not set', parameters: { type: 'io2', iopsPerGB: '0' } },
    { name: 'iops "0" on gp2 (no IOPS setting) -> not set, no error', parameters: { type: 'gp2', iops: '0' } },
    { name: 'iops "0" with iopsPerGB "0" -> neither set, no "both" error', parameters: { type: 'io2', iops: '0', iopsPerGB: '0' } },
  ])('$name', ({ parameters }) => {
    expect(spec(parameters)).not.toHaveProperty('iops');
  });

  it.each([
    { name: 'iops "0" with iopsPerGB 10 -> iopsPerGB used, no "both" error', parameters: { type: 'io2', iops: '0', iopsPerGB: '10' }, iops: 100 },
    { name: 'iops "+3000" (ParseInt takes a sign) -> 3000', parameters: { iops: '+3000' }, iops: 3_000 },
    { name: 'iops "004000" -> 4000', parameters: { iops: '004000' }, iops: 4_000 },
    { name: 'iops below gp3 minimum with auto-increase (applies to iops too) -> 3000', parameters: { iops: '100', allowAutoIOPSPerGBIncrease: 'true' }, iops: 3_000 },
  ])('$name', ({ parameters, iops }) => {
    expect(spec(parameters).iops).toBe(iops);
  });
});

describe('IOPS left to EC2', () => {
  it.each(['gp3', 'gp2', 'io1', 'io2', 'standard'])('%s without iops or iopsPerGB -> iops undefined', (type) => {
    expect(spec({ type }, { requestStorage: '10Gi' })).not.toHaveProperty('iops');
  });

  it('allowAutoIOPSPerGBIncrease without iops -> nothing to raise, iops undefined', () => {
    expect(spec({ type: 'io2', allowAutoIOPSPerGBIncrease: 'true' })).not.toHaveProperty('iops');
  });
});

describe('IOPS adjusted -> said, never silent', () => {
  it.each([
    { name: 'io2 10 GiB at 500,000 -> 10,000, by the per-GiB bound', type: 'io2', size: '10Gi', extra: { iops: '500000' }, given: 10_000, why: 'io2 allows at most 1,000 IOPS per GiB: 10,000 for 10 GiB' },
    { name: 'io2 1,000 GiB at 500,000 -> 256,000, by the type\'s maximum', type: 'io2', size: '1000Gi', extra: { iops: '500000' }, given: 256_000, why: 'io2 allows at most 256,000 IOPS' },
    { name: 'io1 4 GiB at 1/GiB with auto-increase -> 100, raised to the minimum', type: 'io1', size: '4Gi', extra: { iopsPerGB: '1', allowAutoIOPSPerGBIncrease: 'true' }, given: 100, why: 'io1 needs at least 100 IOPS, and allowAutoIOPSPerGBIncrease raised it' },
  ])('$name', ({ type, size, extra, given, why }) => {
    const result = spec({ type, ...extra }, { requestStorage: size });
    expect(result.iops).toBe(given);
    expect(result.iopsAdjustment).toMatchObject({ given, why });
    expect(describeIopsAdjustment(result.iopsAdjustment!)).toBe(`${result.iopsAdjustment!.requested.toLocaleString('en-US')} IOPS asked, ${given.toLocaleString('en-US')} given: ${why}`);
  });

  it('a figure within the limits -> kept, no adjustment', () => {
    const result = spec({ type: 'io2', iops: '10000' }, { requestStorage: '10Gi' });
    expect(result.iops).toBe(10_000);
    expect(result).not.toHaveProperty('iopsAdjustment');
  });
});
