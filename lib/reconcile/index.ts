export { reconcileItems } from './reconcile-items.js';
export type { ReconcileContext } from './context.js';
