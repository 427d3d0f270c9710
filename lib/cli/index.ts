export { DEFAULT_REGISTRY_FILE, NoCommandError, parseClusterArgs, UsageError, USAGE, type AdoptCommand, type ClusterCommand, type PvSource, type RegistryTarget } from './args.js';
export { addSecret, keepNewestSecret, newRegistration, type StoredRegistration } from './edits.js';
export { EXIT, runClusterCli, type CliIo } from './cluster.js';
export { FORWARDER_SECRET, forwarderSecretManifest, generateSecret, redactSecret } from './secrets.js';
export { AlreadyRegisteredError, createFileStore, createSsmStore, storeFor, type RegistrationStore } from './stores.js';
export { adoptionExitCode, otherClusterTag, planAdoption, planDisk, planSnapshots, planUnnamedDisks, wantedTags, type AdoptionStatus, type DiskAdoption, type SnapshotAdoption } from './adopt-plan.js';
export { ebsVolumeId, pvDisks, PvFileSchema, type AdoptPv, type PvDisk } from './adopt-pvs.js';
export { tagResources, VOLUMES_PER_CREATE_TAGS } from './adopt-ec2.js';
export { COMMAND_NAMES, COMMANDS, commandUsage, REGISTRY_OPTIONS, SHORT_USAGE, type CommandName } from './usage.js';
