/**
 * Which credentials a cluster's EC2 calls are signed with, and the EC2 clients that sign them:
 * one per (Region, session), reused across requests so connections and the Region's zones are
 * too. The backend, the scheduled audit and the CLI's audit and teardown all come here.
 */
import type { EC2Client } from '@aws-sdk/client-ec2';
import { isRoleArn, ROLE_ARN_TEXT, roleArnAccount } from '../registry/aws.js';
import { createEc2Client, type Ec2ClientOptions } from './client.js';
import { DEFAULT_BUDGET_ACCOUNT } from './pacing.js';
import { noRoleError, sessionKeyOf, type ClusterSessions, type SessionKey } from './sessions.js';
import type { Ec2Error, Ec2Gateway } from './types.js';

/** The registration's fields that decide its EC2 access. */
export interface Ec2AccessOf {
  clusterId: string;
  region: string;
  aws?: { roleArn?: string; externalId?: string; nodeTag?: { value: string } };
}

/**
 * How one cluster's calls reach EC2: in its session (the role's account keys the rate budget);
 * directly, without a session (tests and benches that run without STS, the operator's CLI; the
 * budget account as configured); or not at all.
 */
export type Ec2Access =
  | { kind: 'session'; key: SessionKey; account: string }
  | { kind: 'direct'; account: string }
  | { kind: 'refused'; error: Ec2Error };

export interface Ec2AccessDefaults {
  /** The deployment's EC2 role (`VOLHOOK_EC2_ROLE_ARN`): the role of every registration that names none. */
  defaultRoleArn?: string;
  /** Calls without a session are allowed: without any role, EC2 is called directly, unfenced. */
  direct: boolean;
  /** The budget account of calls made without a session (`VOLHOOK_AWS_ACCOUNT`). */
  directAccount?: string;
}

/** The decision alone: the registration's role, else the deployment's, else directly where allowed, else refused. */
export function ec2AccessOf(registration: Ec2AccessOf, defaults: Ec2AccessDefaults): Ec2Access {
  const key = sessionKeyOf(registration, defaults.defaultRoleArn);
  if (key) return { kind: 'session', key, account: roleArnAccount(key.roleArn) ?? DEFAULT_BUDGET_ACCOUNT };
  if (defaults.direct) return { kind: 'direct', account: defaults.directAccount || DEFAULT_BUDGET_ACCOUNT };
  return { kind: 'refused', error: noRoleError(registration.clusterId) };
}

export interface ClusterClientsOptions {
  sessions: ClusterSessions;
  defaultRoleArn?: string;
  /**
   * EC2 without a session when no role applies: with `credentials`, or the SDK's default chain
   * when it is absent; its calls' budget account is `account` (default `default`). Only for tests
   * and benches that run without STS (the local stack, the bench) and for the operator's CLI:
   * the backend never falls back to its own role.
   */
  direct?: { credentials?: { accessKeyId: string; secretAccessKey: string }; account?: string };
  /** EC2 endpoint override (the local simulator, moto). */
  endpoint?: string;
  /** Attempts per EC2 call (default that of {@link createEc2Client}). */
  maxAttempts?: number;
  /** Makes each client (default {@link createEc2Client}); the CLI's tests give theirs. */
  makeClient?(options: Ec2ClientOptions): EC2Client;
}

/** A cluster's EC2 client and the account its budget keys name. */
export interface ClusterEc2 {
  client: EC2Client;
  account: string;
}

export interface ClusterClients {
  /** The cluster's EC2 client; throws the `sessionDenied` Ec2Error when no role applies and `direct` is not allowed. */
  for(registration: Ec2AccessOf): ClusterEc2;
  /** Closes every client made. */
  destroy(): void;
}

export function createClusterClients(options: ClusterClientsOptions): ClusterClients {
  if (options.defaultRoleArn !== undefined && !isRoleArn(options.defaultRoleArn)) {
    throw new Error(`VOLHOOK_EC2_ROLE_ARN "${options.defaultRoleArn}" is not ${ROLE_ARN_TEXT}`);
  }
  const defaults: Ec2AccessDefaults = {
    ...(options.defaultRoleArn !== undefined && { defaultRoleArn: options.defaultRoleArn }),
    direct: options.direct !== undefined,
    ...(options.direct?.account !== undefined && { directAccount: options.direct.account }),
  };
  const make = options.makeClient ?? createEc2Client;
  const clients = new Map<string, EC2Client>();
  return {
    for(registration) {
      const access = ec2AccessOf(registration, defaults);
      if (access.kind === 'refused') throw access.error;
      const id = JSON.stringify([registration.region, access.kind === 'session' ? access.key : 'direct']);
      let client = clients.get(id);
      if (!client) {
        client = make({
          region: registration.region,
          ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
          ...(options.maxAttempts !== undefined && { maxAttempts: options.maxAttempts }),
          ...(access.kind === 'session'
            ? { credentials: options.sessions.provider(access.key) }
            : options.direct?.credentials !== undefined && { credentials: options.direct.credentials }),
        });
        clients.set(id, client);
      }
      return { client, account: access.account };
    },
    destroy() {
      for (const client of clients.values()) client.destroy();
      clients.clear();
    },
  };
}

/** A gateway that makes no call: every verb fails with `error` (a cluster without an EC2 session). */
export function refusingGateway(error: Ec2Error): Ec2Gateway {
  const refuse = () => Promise.reject(error);
  return {
    createDisk: refuse,
    findDiskByName: refuse,
    listClusterDisks: refuse,
    getDisk: refuse,
    getInstance: refuse,
    attachDisk: refuse,
    detachDisk: refuse,
    deleteDisk: refuse,
    zones: refuse,
    createSnapshot: refuse,
    createSnapshots: refuse,
    findSnapshotsByName: refuse,
    listClusterSnapshots: refuse,
    getSnapshot: refuse,
    deleteSnapshot: refuse,
    enableFastSnapshotRestores: refuse,
    copyDisk: refuse,
    modifyDisk: refuse,
    getModification: refuse,
    getInitialization: refuse,
    tagDisk: refuse,
    untagDisk: refuse,
    snapshotsIn: (region) => ({ region, findSnapshotsByName: refuse, getSnapshot: refuse, copySnapshot: refuse, deleteSnapshot: refuse }),
  };
}
