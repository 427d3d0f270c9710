export { DEFAULT_REGISTRY_FILE, parseClusterArgs, UsageError, USAGE, type ClusterCommand, type RegistryTarget } from './args.js';
export { addSecret, keepNewestSecret, newRegistration, type StoredRegistration } from './edits.js';
export { EXIT, runClusterCli, type CliIo } from './cluster.js';
export { FORWARDER_SECRET, forwarderSecretManifest, generateSecret, redactSecret } from './secrets.js';
export { AlreadyRegisteredError, createFileStore, createSsmStore, storeFor, type RegistrationStore } from './stores.js';
