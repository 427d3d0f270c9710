/**
 * The accounts one simulator holds behind its endpoint, and which of them a call is for: as in
 * AWS, the credentials decide (a session's, the role's account; a principal's, its own; any
 * other key, the account of the view called — the simulator's own unless a test calls another's).
 */
import { Ec2Error } from './errors.js';

const ACCOUNT_ID = /^\d{12}$/;

/** The simulator's own account first, then the others; throws naming ids that are not 12 digits or come twice. */
export function checkAccountIds(own: string, others: readonly string[] = []): string[] {
  const all = [own, ...others];
  const malformed = all.filter((id) => !ACCOUNT_ID.test(id));
  if (malformed.length) throw new Error(`EC2 simulator: an account id is 12 digits; not ${malformed.map((id) => JSON.stringify(id)).join(', ')}`);
  const twice = [...new Set(all.filter((id, n) => all.indexOf(id) !== n))];
  if (twice.length) throw new Error(`EC2 simulator: account id(s) given more than once (the own account counts): ${twice.join(', ')}`);
  return all;
}

export function isAccountId(id: string): boolean {
  return ACCOUNT_ID.test(id);
}

/**
 * The account a call is served in: the one its credentials belong to, else `fallback`. Held to
 * the accounts the simulator holds: any other is EC2's AuthFailure (401), naming the account.
 */
export function routeCall(credentialAccount: string | undefined, fallback: string, held: readonly string[]): string {
  const account = credentialAccount ?? fallback;
  if (held.includes(account)) return account;
  throw new Ec2Error(
    'AuthFailure',
    `AWS was not able to validate the provided access credentials: they belong to account ${account}, which this simulator does not hold (it holds ${held.join(', ')})`,
    401,
  );
}
