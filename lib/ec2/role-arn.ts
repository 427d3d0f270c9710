/** The IAM identifiers a registration names for its cluster's EC2 session (lib/ec2/sessions.ts). */

/** An IAM role ARN: `arn:<partition>:iam::<account>:role/<path/>name`. */
export const ROLE_ARN_PATTERN = /^arn:aws(?:-[a-z]+)*:iam::(\d{12}):role\/(?:[\w+=,.@-]+\/)*[\w+=,.@-]{1,64}$/;
/** What STS accepts as an ExternalId. */
export const EXTERNAL_ID_PATTERN = /^[\w+=,.@:/-]{2,1224}$/;

/** The account a role belongs to: the budget's account for the calls of its sessions. */
export function accountOfRole(roleArn: string): string {
  const account = ROLE_ARN_PATTERN.exec(roleArn)?.[1];
  if (account === undefined) throw new Error(`"${roleArn}" is not an IAM role ARN (arn:aws:iam::<12-digit account>:role/<name>)`);
  return account;
}
