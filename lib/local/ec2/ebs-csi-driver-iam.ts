/**
 * The reference EBS CSI driver's identity in the simulator: an access key held to AWS's managed
 * policy for the driver, `AmazonEBSCSIDriverPolicy` (infra/iam/aws-managed/, which names where
 * its text comes from), as an EKS cluster's driver role is. Register it with the simulator's
 * `iam.principals` (options) or `addPrincipal` (running).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { IamPrincipal } from '../../iam/evaluate.js';
import { PolicyDocument } from '../../iam/policy.js';
import { DEFAULT_ACCOUNT_ID } from './simulator.js';

export const EBS_CSI_DRIVER_POLICY_FILE = fileURLToPath(new URL('../../../infra/iam/aws-managed/AmazonEBSCSIDriverPolicy.json', import.meta.url));

const ManagedPolicyFile = z.strictObject({
  name: z.literal('AmazonEBSCSIDriverPolicy'),
  arn: z.string().startsWith('arn:aws:iam::aws:policy/'),
  source: z.string().min(1),
  document: PolicyDocument,
});
export type ManagedPolicyFile = z.infer<typeof ManagedPolicyFile>;

let loaded: ManagedPolicyFile | undefined;

/** The managed policy as the data file holds it (read once). */
export function ebsCsiDriverPolicy(): ManagedPolicyFile {
  loaded ??= ManagedPolicyFile.parse(JSON.parse(readFileSync(EBS_CSI_DRIVER_POLICY_FILE, 'utf8')));
  return loaded;
}

/** The driver's principal: an IAM user of `accountId` whose one policy is AmazonEBSCSIDriverPolicy. */
export function ebsCsiDriverPrincipal(options: { accountId?: string; userName?: string } = {}): IamPrincipal {
  const accountId = options.accountId ?? DEFAULT_ACCOUNT_ID;
  const policy = ebsCsiDriverPolicy();
  return {
    arn: `arn:aws:iam::${accountId}:user/${options.userName ?? 'ebs-csi-driver'}`,
    accountId,
    policies: [{ name: policy.name, document: policy.document }],
  };
}

/** `iam.principals` entries of the simulator's options: `accessKeyId` signs as the driver. */
export function ebsCsiDriverPrincipals(accessKeyId: string, options: { accountId?: string } = {}): Record<string, IamPrincipal> {
  return { [accessKeyId]: ebsCsiDriverPrincipal(options) };
}
