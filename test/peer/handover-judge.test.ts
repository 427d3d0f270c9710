/**
 * The verdict both hand-overs end on (handover-support.ts, leftBehind), on a simulator held
 * in-process: it sees what it must, so that its empty answer in the hand-overs means something.
 * Needs no Go.
 */
import { describe, expect, it } from 'vitest';
import { Ec2Simulator } from '../../lib/local/ec2/index.js';
import { leftBehind } from './handover-support.js';

const ZONE = 'us-east-1a';

describe('leftBehind: the simulator judged at the end of a hand-over', () => {
  it('an empty account -> nothing', () => {
    expect(leftBehind(new Ec2Simulator({ region: 'us-east-1' }), new Set())).toEqual([]);
  });

  it('a volume made during the run and not deleted, a snapshot not deleted -> each named', () => {
    const sim = new Ec2Simulator({ region: 'us-east-1' });
    const [volume] = sim.seedVolumes({ zone: ZONE });
    const [snapshot] = sim.seedSnapshots({ volumeId: volume!.id });
    expect(leftBehind(sim, new Set())).toEqual([`volume ${volume!.id} left available (not attached)`, `snapshot ${snapshot!.id} of ${volume!.id} left completed`]);
  });

  it('a root volume (there before the run) not attached to its instance -> named as a root volume', () => {
    const sim = new Ec2Simulator({ region: 'us-east-1' });
    const [root] = sim.seedVolumes({ zone: ZONE });
    expect(leftBehind(sim, new Set([root!.id]))).toEqual([`root volume ${root!.id} available with 0 attachment(s)`]);
  });
});
