/**
 * The CloudFormation intrinsics a role's template uses, resolved as CloudFormation does at
 * deploy time: `Fn::Sub` (a string, or `[string, { name: value }]`) with the pseudo parameters
 * (`${AWS::Partition}`, `${AWS::Region}`, `${AWS::AccountId}`), the template's parameters and
 * `${!x}` for a literal `${x}`, which IAM policy variables need; `Ref` of a parameter or a
 * pseudo parameter; `Fn::GetAtt [<resource>, Arn]` of a DynamoDB table or an IAM role in the
 * template; `Fn::Split [delimiter, string]` (a list of accounts in one parameter). Any other intrinsic is an error naming it: a policy this cannot resolve is never
 * evaluated half-resolved.
 */
export interface CloudFormationContext {
  partition: string;
  region: string;
  accountId: string;
  /** The template's resources, for Fn::GetAtt. */
  resources: Readonly<Record<string, { Type: string; Properties?: Record<string, unknown> }>>;
  /** The template's parameters, as the stack was given them (or their defaults). */
  parameters?: Readonly<Record<string, string>>;
}

function pseudo(ctx: CloudFormationContext): Record<string, string> {
  return { 'AWS::Partition': ctx.partition, 'AWS::Region': ctx.region, 'AWS::AccountId': ctx.accountId, ...ctx.parameters };
}

function sub(template: string, variables: Record<string, string>, ctx: CloudFormationContext): string {
  const known = { ...pseudo(ctx), ...variables };
  return template.replace(/\$\{([^}]*)\}/g, (whole, name: string) => {
    if (name.startsWith('!')) return `\${${name.slice(1)}}`;
    const value = Object.hasOwn(known, name) ? known[name] : undefined;
    if (value === undefined) throw new Error(`Fn::Sub names \${${name}}, which is neither a pseudo parameter, a parameter nor a variable of the Sub (in "${template.slice(0, 200)}")`);
    return value;
  });
}

function ref(name: unknown, ctx: CloudFormationContext): string {
  const known = pseudo(ctx);
  if (typeof name !== 'string' || !Object.hasOwn(known, name)) throw new Error(`Ref ${String(name)} is not a parameter or pseudo parameter this resolver knows`);
  return known[name] as string;
}

function getAtt(target: unknown, ctx: CloudFormationContext): string {
  const [logicalId, attribute] = Array.isArray(target) ? target : String(target).split('.');
  const resource = typeof logicalId === 'string' ? ctx.resources[logicalId] : undefined;
  if (!resource) throw new Error(`Fn::GetAtt names ${String(logicalId)}, which is not a resource of the template`);
  const property = (name: string) => {
    const value = resolveIntrinsics(resource.Properties?.[name], ctx);
    if (typeof value !== 'string') throw new Error(`${logicalId} has no ${name} to make its ARN from`);
    return value;
  };
  if (resource.Type === 'AWS::DynamoDB::Table' && attribute === 'Arn') {
    return `arn:${ctx.partition}:dynamodb:${ctx.region}:${ctx.accountId}:table/${property('TableName')}`;
  }
  if (resource.Type === 'AWS::IAM::Role' && attribute === 'Arn') {
    const path = resource.Properties?.['Path'] === undefined ? '/' : property('Path');
    return `arn:${ctx.partition}:iam::${ctx.accountId}:role${path}${property('RoleName')}`;
  }
  throw new Error(`Fn::GetAtt ${String(logicalId)}.${String(attribute)} (${resource.Type}) is not resolved here`);
}

/** `value` with every intrinsic replaced by what CloudFormation would make of it. */
export function resolveIntrinsics(value: unknown, ctx: CloudFormationContext): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveIntrinsics(v, ctx));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  const [first] = entries;
  if (entries.length === 1 && first && (first[0].startsWith('Fn::') || first[0] === 'Ref')) {
    const [name, arg] = first;
    if (name === 'Fn::Sub' && typeof arg === 'string') return sub(arg, {}, ctx);
    if (name === 'Fn::Sub' && Array.isArray(arg) && arg.length === 2 && typeof arg[0] === 'string' && typeof arg[1] === 'object' && arg[1] !== null) {
      const variables = Object.fromEntries(
        Object.entries(arg[1] as Record<string, unknown>).map(([k, v]) => {
          const resolved = resolveIntrinsics(v, ctx);
          if (typeof resolved !== 'string') throw new Error(`Fn::Sub variable ${k} is not a string once resolved`);
          return [k, resolved];
        }),
      );
      return sub(arg[0], variables, ctx);
    }
    if (name === 'Ref') return ref(arg, ctx);
    if (name === 'Fn::Split' && Array.isArray(arg) && arg.length === 2 && typeof arg[0] === 'string' && arg[0] !== '') {
      const text = resolveIntrinsics(arg[1], ctx);
      if (typeof text !== 'string') throw new Error('Fn::Split of something that is not a string once resolved');
      return text.split(arg[0]);
    }
    if (name === 'Fn::GetAtt') return getAtt(arg, ctx);
    throw new Error(`the intrinsic ${name} is not resolved here (${JSON.stringify(value).slice(0, 200)})`);
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, resolveIntrinsics(v, ctx)]));
}
