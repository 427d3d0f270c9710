import { EC2Client } from '@aws-sdk/client-ec2';
import { expect } from 'vitest';
import { startEc2Simulator, type Clock, type Ec2SimulatorOptions, type RunningEc2Simulator } from '../../../lib/local/ec2/index.js';

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
