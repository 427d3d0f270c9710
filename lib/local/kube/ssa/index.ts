/** Server-side apply and field ownership (metadata.managedFields), as kube-apiserver's field manager has them. */
export { applyWithFieldManager, managedFieldsAfterUpdate, type ApplyResult, type FieldManagerScope } from './field-manager.js';
export { keepTimestampsOfNoop, type ManagedFieldsEntry } from './managed-fields.js';
export { unknownFields } from './typed.js';
