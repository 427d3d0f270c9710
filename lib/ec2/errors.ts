import { Ec2Error, type Ec2ErrorKind } from './types.js';

/**
 * The parts of an SDK or Node error that say what went wrong. The SDK names an EC2 service
 * error after EC2's `<Code>` (`err.name`); Node network errors carry `err.code`.
 */
interface ErrorFacts {
  code: string;
  message: string;
  status?: number;
  fault?: string;
}

/** Network-level failures: the request may not have reached EC2, or its answer was lost. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'TimeoutError',
  'AbortError',
  'RequestTimeout',
  'RequestTimeoutException',
]);

// One-line predicates over EC2's error codes, in the order classifyEc2Error asks them.
/** EC2's answers for a call refused by its request token bucket. */
const THROTTLING_CODES: ReadonlySet<string> = new Set(['RequestLimitExceeded', 'Throttling', 'ThrottlingException']);
export const isThrottlingCode = (code: string) => THROTTLING_CODES.has(code);
const isThrottling = (e: ErrorFacts) => isThrottlingCode(e.code);
const isUnavailable = (e: ErrorFacts) => ['InternalError', 'InternalFailure', 'Unavailable', 'ServiceUnavailable'].includes(e.code);
const isServerFault = (e: ErrorFacts) => (e.status !== undefined && e.status >= 500) || e.fault === 'server';
const isNetwork = (e: ErrorFacts) => NETWORK_CODES.has(e.code);
const isDeviceInUse = (e: ErrorFacts) => e.code === 'InvalidParameterValue' && /attachment point .* is already in use/i.test(e.message);
const isInvalidParameter = (e: ErrorFacts) => ['InvalidParameterValue', 'InvalidParameterCombination', 'InvalidParameter', 'MissingParameter', 'UnknownVolumeType'].includes(e.code);
const isNotFound = (e: ErrorFacts) =>
  ['InvalidVolume.NotFound', 'InvalidInstanceID.NotFound', 'InvalidAttachment.NotFound', 'InvalidSnapshot.NotFound', 'InvalidVolumeModification.NotFound'].includes(e.code);
const isMalformedId = (e: ErrorFacts) => ['InvalidVolumeID.Malformed', 'InvalidInstanceID.Malformed', 'InvalidSnapshotID.Malformed'].includes(e.code);
/** VolumeInUse; for a snapshot, InvalidSnapshot.InUse (an AMI or a pending copy uses it). */
const isVolumeInUse = (e: ErrorFacts) => e.code === 'VolumeInUse' || e.code === 'InvalidSnapshot.InUse';
const isIncorrectState = (e: ErrorFacts) => ['IncorrectState', 'IncorrectInstanceState', 'IncorrectModificationState'].includes(e.code);
const isModificationRate = (e: ErrorFacts) => e.code === 'VolumeModificationRateExceeded';
/**
 * EC2 takes one snapshot of a volume at a time: "Wait at least 15 seconds between concurrent
 * volume snapshots" — a claim's own snapshot and its group's taken at once meet it. Not the
 * object's failure: tried again then.
 */
const isSnapshotRate = (e: ErrorFacts) => e.code === 'SnapshotCreationPerVolumeRateExceeded';
export const SNAPSHOT_PER_VOLUME_INTERVAL_SECONDS = 15;
const isCapacity = (e: ErrorFacts) => e.code === 'InsufficientVolumeCapacity';
const isAttachmentLimit = (e: ErrorFacts) => e.code === 'AttachmentLimitExceeded';
const isZoneMismatch = (e: ErrorFacts) => e.code === 'InvalidVolume.ZoneMismatch';
const isIdempotentMismatch = (e: ErrorFacts) => e.code === 'IdempotentParameterMismatch';
const isVolumeLimit = (e: ErrorFacts) => e.code === 'VolumeLimitExceeded';
const isUnauthorized = (e: ErrorFacts) => e.code === 'UnauthorizedOperation';

/**
 * First match wins. `deviceInUse` comes before `invalidParameter` because EC2 reports a taken
 * device name as an InvalidParameterValue. A malformed ID is `notFound`: no volume or
 * instance can have it, so "delete" of it is done and "attach" of it fails, as for an ID
 * that does not exist.
 */
const RULES: ReadonlyArray<readonly [(e: ErrorFacts) => boolean, Ec2ErrorKind]> = [
  [isThrottling, 'transient'],
  [isUnavailable, 'transient'],
  [isNetwork, 'transient'],
  [isSnapshotRate, 'transient'],
  [isDeviceInUse, 'deviceInUse'],
  [isInvalidParameter, 'invalidParameter'],
  [isNotFound, 'notFound'],
  [isMalformedId, 'notFound'],
  [isVolumeInUse, 'inUse'],
  [isIncorrectState, 'incorrectState'],
  [isCapacity, 'capacity'],
  [isAttachmentLimit, 'attachmentLimit'],
  [isZoneMismatch, 'zoneMismatch'],
  [isIdempotentMismatch, 'idempotentMismatch'],
  [isVolumeLimit, 'volumeLimit'],
  [isUnauthorized, 'unauthorized'],
  [isModificationRate, 'modificationRate'],
  [isServerFault, 'transient'],
];

function factsOf(err: unknown): ErrorFacts {
  if (typeof err !== 'object' || err === null) return { code: 'Unknown', message: String(err) };
  const e = err as {
    name?: unknown;
    code?: unknown;
    Code?: unknown;
    message?: unknown;
    $fault?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  // Node network errors are plain `Error`s whose `code` is the useful part; SDK service
  // errors are named after EC2's code.
  const nodeCode = typeof e.code === 'string' && NETWORK_CODES.has(e.code) ? e.code : undefined;
  const name = typeof e.name === 'string' && e.name !== 'Error' ? e.name : undefined;
  const code = nodeCode ?? (typeof e.Code === 'string' ? e.Code : undefined) ?? name ?? (typeof e.code === 'string' ? e.code : 'Unknown');
  const status = e.$metadata?.httpStatusCode;
  return {
    code,
    message: typeof e.message === 'string' ? e.message : '',
    ...(typeof status === 'number' ? { status } : {}),
    ...(typeof e.$fault === 'string' ? { fault: e.$fault } : {}),
  };
}

/**
 * Sorts any error thrown while calling EC2 into one of the gateway's kinds — the single place
 * where EC2's error codes are interpreted. An `Ec2Error` passes through unchanged. `action`
 * (e.g. `CreateVolume`) is named in the message, so an `unauthorized` error says which
 * permission the backend's role lacks.
 */
export function classifyEc2Error(err: unknown, action?: string): Ec2Error {
  if (err instanceof Ec2Error) return err;
  const facts = factsOf(err);
  const kind = RULES.find(([matches]) => matches(facts))?.[1] ?? 'other';
  const prefix = action ? `EC2 ${action}` : 'EC2';
  const message =
    kind === 'unauthorized'
      ? `${prefix}: the backend's role is not allowed to call ec2:${action ?? '?'} (${facts.code}): ${facts.message}`
      : `${prefix}: ${facts.code}: ${facts.message}`;
  const retryAt = kind === 'modificationRate' ? timeNamedIn(facts.message) : undefined;
  const retryAfterSeconds = isSnapshotRate(facts) ? SNAPSHOT_PER_VOLUME_INTERVAL_SECONDS : undefined;
  const error = new Ec2Error(kind, facts.code, message, action, retryAfterSeconds, retryAt);
  error.cause = err;
  return error;
}

/** An ISO 8601 instant, or `YYYY-MM-DD HH:MM[:SS] UTC`, with its zone. */
const NAMED_TIME = /(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|UTC|[+-]\d{2}:?\d{2})/;

/**
 * The first instant an EC2 message names, with its zone: VolumeModificationRateExceeded's
 * message says when the volume may be modified again. Nothing without a zone is guessed.
 */
export function timeNamedIn(message: string): Date | undefined {
  const match = NAMED_TIME.exec(message);
  if (!match) return undefined;
  const [, day, time, zone] = match as unknown as [string, string, string, string];
  const at = new Date(`${day}T${time}${zone === 'UTC' ? 'Z' : zone}`);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** The error a gateway call ends with when the request's deadline passes first. */
/** The code of a call that got no answer before its request's deadline. */
export const DEADLINE_EXCEEDED = 'DeadlineExceeded';

export function deadlineExceeded(action: string): Ec2Error {
  return new Ec2Error('transient', DEADLINE_EXCEEDED, `EC2 ${action}: no answer before the request's deadline`, action);
}
