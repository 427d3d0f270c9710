import { describe, expect, it } from 'vitest';
import { expectParameterError, spec } from './helpers.js';

describe('throughput', () => {
  it.each([
    { name: 'gp3 at the minimum 125 -> 125', parameters: { throughput: '125' }, result: 125 },
    { name: 'gp3 750 with default 3000 IOPS -> 750 (exactly 0.25/IOPS)', parameters: { throughput: '750' }, result: 750 },
    { name: 'gp3 1000 with iops 4000 -> 1000', parameters: { iops: '4000', throughput: '1000' }, result: 1_000 },
    { name: 'gp3 1000 with iops capped 16000 -> 5000 on 10 GiB -> 1000 (≤ 1250)', parameters: { iops: '16000', throughput: '1000' }, result: 1_000 },
    { name: 'gp3 2000 with iops 8000 -> 2000 (the current gp3 maximum)', parameters: { iops: '8000', throughput: '2000' }, result: 2_000, size: '100Gi' },
    { name: 'gp3 "+500" (ParseInt takes a sign) -> 500', parameters: { throughput: '+500' }, result: 500 },
  ])('$name', ({ parameters, result, size }) => {
    expect(spec(parameters, { requestStorage: size ?? '10Gi' }).throughput).toBe(result);
  });

  it.each([
    { name: 'throughput "0" -> not set, as the driver', parameters: { throughput: '0' } },
    { name: 'throughput negative -> not set', parameters: { throughput: '-125' } },
    { name: 'throughput "0" on gp2 (no throughput setting) -> not set, no error', parameters: { type: 'gp2', throughput: '0' } },
  ])('$name', ({ parameters }) => {
    expect(spec(parameters)).not.toHaveProperty('throughput');
  });

  it('gp3 without throughput -> undefined (EC2 default 125)', () => {
    expect(spec({ type: 'gp3' })).not.toHaveProperty('throughput');
  });

  it.each([
    { name: 'throughput on gp2 -> error naming throughput', parameters: { type: 'gp2', throughput: '250' }, problem: /gp2 has no throughput setting/ },
    { name: 'throughput on io1 -> error', parameters: { type: 'io1', throughput: '250' }, problem: /io1 has no throughput setting/ },
    { name: 'throughput on io2 -> error', parameters: { type: 'io2', throughput: '250' }, problem: /io2 has no throughput setting/ },
    { name: 'throughput on st1 -> error', parameters: { type: 'st1', throughput: '250' }, problem: /st1 has no throughput setting/, size: '500Gi' },
    { name: 'throughput below 125 -> error', parameters: { throughput: '124' }, problem: /outside gp3's range of 125 to 2000/ },
    { name: 'throughput above 2000 -> error', parameters: { iops: '16000', throughput: '2001' }, problem: /outside gp3's range/, size: '100Gi' },
    { name: 'throughput 751 with default 3000 IOPS -> error, > 0.25 × iops', parameters: { throughput: '751' }, problem: /at 3000 IOPS \(at most 750 MiB\/s\)/ },
    { name: 'throughput 1000 with iops 3999 -> error, > 0.25 × iops', parameters: { iops: '3999', throughput: '1000' }, problem: /at 3999 IOPS \(at most 999 MiB\/s\)/ },
    { name: 'throughput checked against capped IOPS (16000 -> 3000 on 6 GiB) -> error', parameters: { iops: '16000', throughput: '1000' }, problem: /at 3000 IOPS/, size: '6Gi' },
    { name: 'throughput not a number -> error', parameters: { throughput: 'fast' }, problem: /"fast" is not a whole number/ },
    { name: 'throughput fractional -> error', parameters: { throughput: '125.5' }, problem: /not a whole number/ },
    { name: 'throughput empty (the driver\'s ParseInt error) -> error', parameters: { throughput: '' }, problem: /not a whole number/ },
  ])('$name', ({ parameters, problem, size }) => {
    expectParameterError(() => spec(parameters, { requestStorage: size ?? '10Gi' }), 'throughput', problem);
  });
});
