export * from './kube-objects.js';
export * from './items.js';
export * from './writes.js';
export * from './results.js';
export * from './signing.js';
export * from './wellknown.js';
export * from './claims.js';
