export { startEc2Simulator, ADMIN_PREFIX, type RunningEc2Simulator } from './server.js';
export { DEFAULT_ACCOUNT_ID, Ec2Simulator, type Ec2Response, type Ec2EffectiveConfig } from './simulator.js';
export type { Ec2Account } from './account-view.js';
export type { Ec2Caller, Ec2IamConfig } from './iam.js';
export { STS_VERSION, type Ec2Role, type StsSession } from './sts.js';
export { authorizationRequests, AUTHORIZED_ACTIONS, type AuthorizationRequest } from './authorization.js';
export { ManualClock, systemClock, type Clock } from './clock.js';
export { DEFAULT_BUCKETS, type BucketSpec } from './buckets.js';
export {
  DEFAULT_LATENCY,
  DEFAULT_CREATE_FAULTS,
  type Ec2SimulatorOptions,
  type Ec2RuntimeConfig,
  type ActionFault,
  type FaultConfig,
  type CreateFaultRule,
  type AttachFaultRule,
  type SnapshotFaultRule,
  type ThrottlingConfig,
  type LatencyTable,
  type ZoneInfo,
} from './config.js';
export type { LatencySpec } from './random.js';
export type { Ec2SimStats, ActionStats } from './stats.js';
export type { RunInstancesRequest } from './instances.js';
export type {
  Volume,
  Instance,
  Attachment,
  Tag,
  VolumeModification,
  WorldState,
  Snapshot,
  SnapshotState,
  FastSnapshotRestore,
  FastSnapshotRestoreState,
} from './model.js';
export { VOLUME_LIMITS } from './volume-rules.js';
export { SeedSnapshotSchema, SeedVolumeSchema, type SeedSnapshotRequest, type SeedVolumeRequest } from './seed.js';
export { ebsCsiDriverPolicy, ebsCsiDriverPrincipal, ebsCsiDriverPrincipals, EBS_CSI_DRIVER_POLICY_FILE } from './ebs-csi-driver-iam.js';
export { INSTANCE_TYPES, type InstanceTypeInfo } from './instance-types.js';
