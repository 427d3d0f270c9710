/**
 * A tag template that cannot be evaluated: a Go text/template parse or execution error, or a
 * construct volhook's evaluator refuses. `source` is the offending action as written
 * (`{{ .PVCName | foo }}`), so the message shows the user exactly what to fix.
 *
 * As in the EBS CSI driver, a template error refuses the whole volume: the value is never
 * kept as literal text.
 */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
  readonly problem: string;
  readonly source: string | undefined;

  constructor(problem: string, source?: string) {
    super(source === undefined ? problem : `${source}: ${problem}`);
    this.problem = problem;
    this.source = source;
  }
}

/** A problem found while evaluating one action; the caller adds the action's source. */
export class ExecError extends Error {
  override readonly name = 'ExecError';
}
