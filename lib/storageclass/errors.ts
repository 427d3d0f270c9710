// Defined with the quantities in lib/contract, whose parseQuantity throws it.
export { ParameterError } from '../contract/parameter-error.js';
