/** An IAM policy document, as a role's inline policy carries it once CloudFormation resolved it. */
import { z } from 'zod';

const strings = z.union([z.string(), z.array(z.string())]);

export const PolicyStatement = z.strictObject({
  Sid: z.string().optional(),
  Effect: z.enum(['Allow', 'Deny']),
  Action: strings.optional(),
  NotAction: strings.optional(),
  Resource: strings.optional(),
  NotResource: strings.optional(),
  Condition: z.record(z.string(), z.record(z.string(), strings)).optional(),
});
export type PolicyStatement = z.infer<typeof PolicyStatement>;

export const PolicyDocument = z.strictObject({
  Version: z.literal('2012-10-17'),
  Statement: z.array(PolicyStatement),
});
export type PolicyDocument = z.infer<typeof PolicyDocument>;

/** A statement's actions (or NotActions) as a list. */
export function listOf(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}
