export * from './registration.js';
export { createFileRegistry, createStaticRegistry, parseRegistration, RegistryFileSchema } from './file-registry.js';
export { registryFromEnvironment } from './from-environment.js';
