/**
 * The stage params that make a deployment use an existing table instead of creating its own
 * (`sharedReplayTable`, `sharedBudgetTable` in serverless.yml): a standby backend given its
 * primary's (docs/deploy.md, "A standby backend"). The value is the table's name, in the
 * deployment's own account and Region — for a primary in another Region, the name of the
 * global table, whose replica in this Region the functions use. The Lambda role is granted that
 * table's ARN, made from the name, the deployment's Region and account; nothing else.
 *
 * infra/serverless/shared-tables.cjs refuses a bad value with the message below before
 * anything is packaged or deployed.
 */

/** DynamoDB's rule for a table name: 3 to 255 of letters, digits, `_`, `-` and `.`. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

export interface SharedTableParam {
  /** The param's name (`sharedReplayTable`). */
  param: string;
  /** Its value; empty when not given (the stage creates and uses its own table). */
  value: string;
  /** The name of the table the stage creates when the param is not given. */
  own: string;
}

/** Why `shared` cannot be used, or undefined when it can (or is not given). */
export function sharedTableRefusal(shared: SharedTableParam): string | undefined {
  const { param, value, own } = shared;
  if (value === '') return undefined;
  const given = `--param="${param}=${value}"`;
  if (value.startsWith('arn:')) {
    return `${given}: give the table's name, not its ARN. The table must be in this deployment's account and Region (for a primary in another Region, give the name of its global table, which has a replica here); the functions' role is granted that table's ARN alone.`;
  }
  if (!TABLE_NAME.test(value)) {
    return `${given}: not a DynamoDB table name (3 to 255 letters, digits, "_", "-" or "."). Give the name of the primary's table, e.g. volhook-prod-webhook-ids.`;
  }
  if (value === own) {
    return `${given}: that is the table this stage creates itself; a standby names its primary's table, and a stage without a primary leaves ${param} unset.`;
  }
  return undefined;
}

/** Every refusal of `params`, one message each; empty when all can be used. */
export function sharedTableRefusals(params: readonly SharedTableParam[]): string[] {
  return params.flatMap((p) => sharedTableRefusal(p) ?? []);
}
