/**
 * Tag templates as the EBS CSI driver evaluates them: Go text/template with the driver's
 * function map, over `{ .PVCName, .PVCNamespace, .PVName }`. See docs/parameters.md for what
 * is supported and what is refused.
 */
import { execute } from './exec.js';
import { parse } from './parser.js';
import type { TemplateData } from './values.js';

export { TemplateError } from './errors.js';
export type { TemplateData } from './values.js';

/**
 * The template's text with every action evaluated. Pure and linear in the template's size (no
 * loops or recursion are accepted).
 *
 * @throws TemplateError for a parse or execution error, or a construct volhook refuses; its
 * message names the offending action.
 */
export function evaluateTemplate(template: string, data: TemplateData): string {
  return execute(parse(template), data);
}
