// Quantities are the contract's floor (lib/contract/quantity.ts); the StorageClass rules use them from there.
export { ceilGiB, formatGiB, parseQuantity, roundUpToGiB } from '../contract/quantity.js';
