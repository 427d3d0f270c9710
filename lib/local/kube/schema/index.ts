/** The field schema of the served kinds (schema.json) and what is read from it. */
export { deduce, resolve, rootType, type Atom } from './schema.js';
export { applySchemaDefaults } from './structural-defaults.js';
export type { TypeRef } from './model.js';
