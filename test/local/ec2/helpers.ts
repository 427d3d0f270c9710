import { EC2Client } from '@aws-sdk/client-ec2';
import { afterEach, beforeEach, expect } from 'vitest';
import {
  ManualClock,
  startEc2Simulator,
  type Clock,
  type Ec2Simulator,
  type Ec2SimulatorOptions,
  type RunningEc2Simulator,
} from '../../../lib/local/ec2/index.js';

/** The zone the tests make their volumes in. */
export const ZONE = 'us-east-1a';

export interface TestSim extends RunningEc2Simulator {
  ec2: EC2Client;
}

/** A simulator on a free loopback port and an SDK client for it (one attempt: errors surface). */
export async function startTestSim(options: Ec2SimulatorOptions = {}, clock?: Clock): Promise<TestSim> {
  const running = await startEc2Simulator({ seed: 1, ...options, host: '127.0.0.1', port: 0 }, clock);
  const ec2 = new EC2Client({
    endpoint: running.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  return {
    ...running,
    ec2,
    close: async () => {
      ec2.destroy();
      await running.close();
    },
  };
}

/** The simulator of the test running now; see {@link simPerTest}. */
export interface CurrentSim {
  readonly ec2: EC2Client;
  readonly sim: Ec2Simulator;
  /** Time passes only when a test advances it. */
  readonly clock: ManualClock;
}

/**
 * A fresh simulator on a ManualClock for each test of the file, closed after it; throttling
 * off unless `options` turn it on. Its fields are the current test's.
 */
export function simPerTest(options: Ec2SimulatorOptions = {}): CurrentSim {
  let current: { t: TestSim; clock: ManualClock } | undefined;
  beforeEach(async () => {
    const clock = new ManualClock();
    current = { t: await startTestSim({ throttling: false, ...options }, clock), clock };
  });
  afterEach(async () => {
    await current?.t.close();
    current = undefined;
  });
  const now = () => {
    if (!current) throw new Error('simPerTest: the simulator exists only while a test runs');
    return current;
  };
  return {
    get ec2() {
      return now().t.ec2;
    },
    get sim() {
      return now().t.sim;
    },
    get clock() {
      return now().clock;
    },
  };
}

/** {@link startTestSim} for tests that start their own simulators: every one is closed after each test. */
export function simsClosedAfterEach(): typeof startTestSim {
  const running: TestSim[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((t) => t.close()));
  });
  return async (options, clock) => {
    const t = await startTestSim(options, clock);
    running.push(t);
    return t;
  };
}

/** Awaits a rejected SDK call and checks EC2's error code and HTTP status. */
export async function expectEc2Error(call: Promise<unknown>, code: string, status = 400): Promise<Error & { Code?: string }> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e as Error & { Code?: string; $metadata?: { httpStatusCode?: number } },
  );
  expect(err, `expected ${code}`).toBeDefined();
  const e = err as Error & { Code?: string; $metadata?: { httpStatusCode?: number } };
  expect(e.name).toBe(code);
  expect(e.Code).toBe(code);
  expect(e.$metadata?.httpStatusCode).toBe(status);
  return e;
}

/** An STS refusal as the SDK surfaces it: code, HTTP status and message (fails the test when the call succeeds). */
export async function stsRefusal(call: Promise<unknown>): Promise<{ name: string; status?: number; message: string }> {
  const err = (await call.then(
    () => undefined,
    (e: unknown) => e,
  )) as (Error & { $metadata?: { httpStatusCode?: number } }) | undefined;
  expect(err, 'expected STS to refuse').toBeDefined();
  return { name: err!.name, status: err!.$metadata?.httpStatusCode, message: err!.message };
}

/** Polls until `check` passes, for tests over real time at a high time scale. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
