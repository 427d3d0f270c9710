/** Two clusters in two accounts behind one backend, on moto's EC2 and STS: see support/two-accounts-suite.ts. */
import { afterAll, beforeAll, describe } from 'vitest';
import { startTwoAccounts } from './support/accounts.js';
import { startMoto, type Moto } from './support/moto.js';
import { twoAccountsSuite } from './support/two-accounts-suite.js';

let moto: Moto;
beforeAll(async () => {
  moto = await startMoto();
}, 90_000);
afterAll(async () => moto?.stop());

describe("two clusters in two accounts behind one backend (moto's EC2 and STS)", () => twoAccountsSuite(() => startTwoAccounts({ endpoint: moto.url })));
