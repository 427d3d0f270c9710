/**
 * A simulator's time scale (`ec2TimeScale`) shrinks the waits the backend measures against EC2's
 * own durations; a scale that is not a positive number is refused when the app is made.
 */
import { describe, expect, it } from 'vitest';
import { createApp } from '../../lib/app/index.js';
import { refusingGateway, Ec2Error } from '../../lib/ec2/index.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { registration, SECRET_C1 } from './harness.js';

const deps = (ec2TimeScale: number) => ({
  registry: createStaticRegistry([registration('c1', SECRET_C1)]),
  gatewayFor: () => refusingGateway(new Ec2Error('transient', 'Unused', 'not called in this test')),
  ec2TimeScale,
});

describe('ec2TimeScale', () => {
  it.each([0, -2, Number.NaN, Number.POSITIVE_INFINITY])('%s -> refused, naming the option', (scale) => {
    expect(() => createApp(deps(scale))).toThrow(`ec2TimeScale must be a positive number, got ${scale}`);
  });

  it('control: 20 (the local stack at VOLHOOK_EC2_TIME_SCALE=20) -> an app', () => {
    expect(createApp(deps(20)).fetch).toBeTypeOf('function');
  });
});
