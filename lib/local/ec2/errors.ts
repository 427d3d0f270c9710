/**
 * An answer EC2 gives as `<Response><Errors><Error>`. Thrown by the rules and turned into
 * XML in one place, so decision code never thinks about HTTP.
 */
export class Ec2Error extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number = statusForCode(code),
  ) {
    super(message);
    this.name = 'Ec2Error';
  }
}

/** EC2 answers throttling and unavailability with 503, its own faults with 500, the rest 400. */
export function statusForCode(code: string): number {
  switch (code) {
    case 'RequestLimitExceeded':
    case 'Unavailable':
    case 'ServiceUnavailable':
      return 503;
    case 'InternalError':
    case 'InternalFailure':
      return 500;
    case 'DryRunOperation':
      return 412;
    case 'UnauthorizedOperation':
      return 403;
    default:
      return 400;
  }
}

export const ec2Errors = {
  throttled: () => new Ec2Error('RequestLimitExceeded', 'Request limit exceeded.'),
  internal: () =>
    new Ec2Error('InternalError', 'An internal error has occurred. Please try again later.'),
  missing: (name: string) =>
    new Ec2Error('MissingParameter', `The request must contain the parameter ${name}`),
  invalidValue: (message: string) => new Ec2Error('InvalidParameterValue', message),
  combination: (message: string) => new Ec2Error('InvalidParameterCombination', message),
  volumeNotFound: (id: string) =>
    new Ec2Error('InvalidVolume.NotFound', `The volume '${id}' does not exist.`),
  volumeMalformed: (id: string) =>
    new Ec2Error('InvalidVolumeID.Malformed', `Invalid id: "${id}" (expecting "vol-...")`),
  instanceNotFound: (id: string) =>
    new Ec2Error('InvalidInstanceID.NotFound', `The instance ID '${id}' does not exist`),
  instanceMalformed: (id: string) =>
    new Ec2Error('InvalidInstanceID.Malformed', `Invalid id: "${id}" (expecting "i-...")`),
  incorrectState: (message: string) => new Ec2Error('IncorrectState', message),
  snapshotNotFound: (id: string) =>
    new Ec2Error('InvalidSnapshot.NotFound', `The snapshot '${id}' does not exist.`),
  snapshotMalformed: (id: string) =>
    new Ec2Error('InvalidSnapshotID.Malformed', `Invalid id: "${id}" (expecting "snap-...")`),
  dryRun: () =>
    new Ec2Error('DryRunOperation', 'Request would have succeeded, but DryRun flag is set.'),
};
