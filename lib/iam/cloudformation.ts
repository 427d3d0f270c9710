/**
 * The CloudFormation intrinsics a role policy uses, resolved as CloudFormation does at deploy
 * time: `Fn::Sub` with the pseudo parameters (`${AWS::Partition}`, `${AWS::Region}`,
 * `${AWS::AccountId}`, and `${!x}` for a literal `${x}`, which IAM policy variables need) and
 * `Fn::GetAtt [<table>, Arn]` of a DynamoDB table in the template. Any other intrinsic is an
 * error naming it: a policy this cannot resolve is never evaluated half-resolved.
 */
export interface CloudFormationContext {
  partition: string;
  region: string;
  accountId: string;
  /** The template's resources, for Fn::GetAtt. */
  resources: Readonly<Record<string, { Type: string; Properties?: Record<string, unknown> }>>;
}

function sub(template: string, ctx: CloudFormationContext): string {
  const pseudo: Record<string, string> = { 'AWS::Partition': ctx.partition, 'AWS::Region': ctx.region, 'AWS::AccountId': ctx.accountId };
  return template.replace(/\$\{([^}]*)\}/g, (whole, name: string) => {
    if (name.startsWith('!')) return `\${${name.slice(1)}}`;
    const value = pseudo[name];
    if (value === undefined) throw new Error(`Fn::Sub names \${${name}}, which is not a pseudo parameter this resolver knows (in "${template}")`);
    return value;
  });
}

function getAtt(target: unknown, ctx: CloudFormationContext): string {
  const [logicalId, attribute] = Array.isArray(target) ? target : String(target).split('.');
  const resource = typeof logicalId === 'string' ? ctx.resources[logicalId] : undefined;
  if (!resource) throw new Error(`Fn::GetAtt names ${String(logicalId)}, which is not a resource of the template`);
  if (resource.Type !== 'AWS::DynamoDB::Table' || attribute !== 'Arn') {
    throw new Error(`Fn::GetAtt ${String(logicalId)}.${String(attribute)} (${resource.Type}) is not resolved here`);
  }
  const name = resource.Properties?.['TableName'];
  if (typeof name !== 'string') throw new Error(`the table ${logicalId} has no TableName to make its ARN from`);
  return `arn:${ctx.partition}:dynamodb:${ctx.region}:${ctx.accountId}:table/${name}`;
}

/** `value` with every intrinsic replaced by what CloudFormation would make of it. */
export function resolveIntrinsics(value: unknown, ctx: CloudFormationContext): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveIntrinsics(v, ctx));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  const [first] = entries;
  if (entries.length === 1 && first && (first[0].startsWith('Fn::') || first[0] === 'Ref')) {
    const [name, arg] = first;
    if (name === 'Fn::Sub' && typeof arg === 'string') return sub(arg, ctx);
    if (name === 'Fn::GetAtt') return getAtt(arg, ctx);
    throw new Error(`the intrinsic ${name} is not resolved here (${JSON.stringify(value)})`);
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolveIntrinsics(v, ctx)]));
}
