export * from './registration.js';
export {
  createFileRegistry,
  createStaticRegistry,
  DEFAULT_REGISTRY_FILE,
  parseRegistration,
  RegistryFileSchema,
  RegistryMissingError,
  registryMissingMessage,
} from './file-registry.js';
export { registryFromEnvironment } from './from-environment.js';
export {
  createSsmRegistry,
  DEFAULT_REGISTRY_MAX_AGE_SECONDS,
  isParameterNotFound,
  normalizeSsmPath,
  registrationParameterName,
  type SsmRegistryOptions,
} from './ssm-registry.js';
export { AwsSettingsSchema, EC2_ROLE_PATH, isRoleArn, nodeTagProblem, ROLE_ARN_TEXT, roleArnAccount, roleArnPath, type AwsSettings } from './aws.js';
export { nodeTagKeyFrom, withNodeTagKey } from './node-tag-key.js';
