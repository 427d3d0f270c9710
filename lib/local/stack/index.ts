export { startLocalStack, DEFAULT_PORTS, type LocalStack, type LocalStackOptions, type RealLocalStack, type RealStackOptions } from './stack.js';
export type { LocalNode } from './cluster-objects.js';
export { DEFAULT_LOCAL_DIR, localDirFrom, localPaths, readDescriptor, LocalStackDescriptorSchema, type LocalStackDescriptor } from './local-files.js';
export { PortInUseError, STACK_SERVERS, type StackServer } from './ports.js';
export { DEFAULT_FORWARDER_PORT, PORT_VARIABLES, portInUseMessage } from './start-env.js';
