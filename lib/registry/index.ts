export * from './registration.js';
export { createFileRegistry, createStaticRegistry, parseRegistration, RegistryFileSchema } from './file-registry.js';
export { registryFromEnvironment } from './from-environment.js';
export {
  createSsmRegistry,
  DEFAULT_REGISTRY_MAX_AGE_SECONDS,
  isParameterNotFound,
  normalizeSsmPath,
  registrationParameterName,
  type SsmRegistryOptions,
} from './ssm-registry.js';
