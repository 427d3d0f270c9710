export { startLocalStack, DEFAULT_PORTS, type LocalStack, type LocalStackOptions } from './stack.js';
export type { LocalNode } from './cluster-objects.js';
export { DEFAULT_LOCAL_DIR, localDirFrom, localPaths, readDescriptor, LocalStackDescriptorSchema, type LocalStackDescriptor } from './local-files.js';
