/**
 * Values walked with their schema, as structured-merge-diff's `typed` package walks them:
 * the field set a value owns, the merge of an applied configuration into a live object, the
 * comparison of two objects, removing a set of fields, and validation. Ported rule for rule
 * (typed/tofieldset.go, merge.go, compare.go, remove.go, validate.go), because ownership and
 * pruning follow from these rules in ways a simpler walk gets subtly wrong (an empty list
 * owns nothing; an emptied map becomes null; struct fields are not members unless empty).
 */
export { compare, type Comparison } from './compare.js';
export { TypedError, merge } from './merge.js';
export { removeItems } from './remove.js';
export { ensureNamedFieldsAreMembers, toFieldSet } from './to-field-set.js';
export { unknownFields, validate, validationText, type ValidationError } from './validate.js';
export { listItemElement } from './values.js';
