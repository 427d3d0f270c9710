/** Two clusters in two accounts behind one backend, on the simulator: see support/two-accounts-suite.ts. */
import { describe } from 'vitest';
import { startTwoAccounts } from './support/accounts.js';
import { twoAccountsSuite } from './support/two-accounts-suite.js';

describe('two clusters in two accounts behind one backend (the simulator, IAM evaluated)', () => twoAccountsSuite(() => startTwoAccounts()));
