/** The flags of the bench's scenario (d), a fleet under faults (bench/lib/args.ts). */
import { describe, expect, it } from 'vitest';
import { FLEET_TIME_SCALE, parseBenchArgs, UsageError } from '../../bench/lib/args.js';

describe('bench --only d', () => {
  it('--only d -> 3 clusters × 300 claims, 3 backends, with faults and without, at the fleet time scale; the flags change each; the default runs a,b,c without it', () => {
    const args = parseBenchArgs(['--only', 'd']);
    expect(args).toMatchObject({ only: ['d'], timeScale: FLEET_TIME_SCALE, fleet: { clusters: 3, claims: 300, backends: 3, faults: 'both' } });
    expect(args !== 'help' && args.command).toContain(`--time-scale ${FLEET_TIME_SCALE} --only d --seed 1 --fleet-clusters 3 --fleet-claims 300 --fleet-backends 3 --faults both`);
    const sized = parseBenchArgs(['--only', 'd', '--fleet-clusters', '4', '--fleet-claims', '500', '--fleet-backends', '2', '--faults', 'on', '--time-scale', '1']);
    expect(sized).toMatchObject({ timeScale: 1, fleet: { clusters: 4, claims: 500, backends: 2, faults: 'on' } });
    expect(parseBenchArgs([])).toMatchObject({ only: ['a', 'b', 'c'], timeScale: 1 });
  });

  it('refused: --faults other than both, on, off; one cluster (a fleet is several); 0 claims', () => {
    expect(() => parseBenchArgs(['--only', 'd', '--faults', 'some'])).toThrow(/--faults takes both, on or off/);
    expect(() => parseBenchArgs(['--only', 'd', '--fleet-clusters', '1'])).toThrow(UsageError);
    expect(() => parseBenchArgs(['--only', 'd', '--fleet-claims', '0'])).toThrow(UsageError);
    // The control: the same flags in range are taken.
    expect(parseBenchArgs(['--only', 'd', '--faults', 'off', '--fleet-clusters', '2', '--fleet-claims', '1'])).toMatchObject({ fleet: { clusters: 2, claims: 1, faults: 'off' } });
  });
});
