export { startLocalStack, DEFAULT_PORTS, type LocalStack, type LocalStackOptions } from './stack.js';
export type { LocalNode } from './cluster-objects.js';
