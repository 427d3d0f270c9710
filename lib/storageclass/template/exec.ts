/**
 * Go text/template's executor (text/template/exec.go) over the parser's tree: the same order
 * of evaluation, argument type checks, short-circuit `and`/`or`, variable scopes and error
 * texts, so a template does here what it does in the EBS CSI driver, or fails as it does.
 */
import { ExecError, TemplateError } from './errors.js';
import { FUNCTIONS } from './functions.js';
import type { Command, Node, Operand, Pipeline } from './parser.js';
import { printValue, Props, truth, typeName, type ParamType, type TemplateData, type Value } from './values.js';

/** "No value yet": the final argument of a pipeline's first command. */
const MISSING = Symbol('missing');
type Final = Value | typeof MISSING;


/** Runs a parsed template over the data; throws TemplateError naming the failing action. */
export function execute(nodes: readonly Node[], data: TemplateData): string {
  const state = new State(new Props(data));
  state.walk(state.root, nodes);
  return state.out;
}

interface Variable {
  name: string;
  value: Value;
}

class State {
  out = '';
  private readonly vars: Variable[];

  constructor(readonly root: Props) {
    this.vars = [{ name: '$', value: root }];
  }

  walk(dot: Value, nodes: readonly Node[]): void {
    for (const node of nodes) {
      switch (node.kind) {
        case 'text':
          this.out += node.text;
          break;
        case 'action': {
          const value = this.inAction(node.source, () => this.pipeline(dot, node.pipe));
          if (!node.pipe.decl) this.out += printValue(value);
          break;
        }
        case 'if':
        case 'with': {
          const mark = this.vars.length;
          const value = this.inAction(node.source, () => this.pipeline(dot, node.pipe));
          if (truth(value)) this.walk(node.kind === 'with' ? value : dot, node.list);
          else if (node.elseList) this.walk(dot, node.elseList);
          this.vars.length = mark;
          break;
        }
      }
    }
  }

  private inAction<T>(source: string, run: () => T): T {
    try {
      return run();
    } catch (error) {
      if (error instanceof ExecError) throw new TemplateError(error.message, source);
      throw error;
    }
  }

  private pipeline(dot: Value, pipe: Pipeline): Value {
    let value: Final = MISSING;
    for (const cmd of pipe.cmds) value = this.command(dot, cmd, value);
    if (value === MISSING) throw new ExecError('empty pipeline');
    if (pipe.decl) {
      if (pipe.decl.assign) this.setVar(pipe.decl.variable, value);
      else this.vars.push({ name: pipe.decl.variable, value });
    }
    return value;
  }

  private command(dot: Value, cmd: Command, final: Final): Value {
    const [first, ...rest] = cmd.args as [Operand, ...Operand[]];
    switch (first.kind) {
      case 'field':
        return this.fieldChain(dot, first.names, first.text, cmd.args, final);
      case 'chain':
        return this.fieldChain(this.operandValue(dot, first.base, 'any'), first.names, first.text, cmd.args, final);
      case 'identifier':
        return this.call(dot, first.name, rest, final);
      case 'variable': {
        const value = this.varValue(first.name);
        if (first.names.length === 0) {
          this.notAFunction(cmd.args, final);
          return value;
        }
        return this.fieldChain(value, first.names, first.text, cmd.args, final);
      }
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.pipeline(dot, first.pipe);
      case 'dot':
        this.notAFunction(cmd.args, final);
        return dot;
      case 'string':
      case 'number':
      case 'bool':
        this.notAFunction(cmd.args, final);
        return first.value;
    }
  }

  private notAFunction(args: readonly Operand[], final: Final): void {
    if (args.length > 1 || final !== MISSING) throw new ExecError(`can't give argument to non-function ${args[0]!.text}`);
  }

  /** `.A.B` on `receiver`: all but the last field take no arguments. */
  private fieldChain(receiver: Value, names: readonly string[], text: string, args: readonly Operand[], final: Final): Value {
    let value = receiver;
    names.forEach((name, i) => {
      const last = i === names.length - 1;
      value = this.field(value, name, text, last && (args.length > 1 || final !== MISSING));
    });
    return value;
  }

  private field(receiver: Value, name: string, text: string, hasArgs: boolean): Value {
    if (receiver instanceof Props && receiver.has(name)) {
      if (hasArgs) throw new ExecError(`at <${text}>: ${name} has arguments but cannot be invoked as function`);
      return receiver.get(name);
    }
    throw new ExecError(`at <${text}>: can't evaluate field ${name} in type ${typeName(receiver)}`);
  }

  private varValue(name: string): Value {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    throw new ExecError(`undefined variable: ${name}`);
  }

  private setVar(name: string, value: Value): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    throw new ExecError(`undefined variable: ${name}`);
  }

  /** Go's evalCall: arity, then arguments in order, then the piped value, then the call. */
  private call(dot: Value, name: string, args: readonly Operand[], final: Final): Value {
    const fn = FUNCTIONS[name]!;
    const numIn = args.length + (final === MISSING ? 0 : 1);
    if (fn.variadic) {
      if (numIn < fn.params.length) throw new ExecError(`wrong number of args for ${name}: want at least ${fn.params.length} got ${args.length}`);
    } else if (numIn !== fn.params.length) {
      throw new ExecError(`wrong number of args for ${name}: want ${fn.params.length} got ${numIn}`);
    }
    const typeAt = (i: number): ParamType => fn.params[i] ?? fn.variadic!;

    if (name === 'and' || name === 'or') {
      let value: Value | undefined;
      for (const arg of args) {
        value = this.operandValue(dot, arg, 'any');
        if (truth(value) === (name === 'or')) return value;
      }
      return final === MISSING ? value! : final;
    }

    const argv = args.map((arg, i) => this.operandValue(dot, arg, typeAt(i)));
    if (final !== MISSING) argv.push(checkType(final, typeAt(numIn - 1)));
    try {
      return fn.call(argv);
    } catch (error) {
      if (error instanceof ExecError || error instanceof RangeError) throw new ExecError(`error calling ${name}: ${error.message}`);
      throw error;
    }
  }

  /** Go's evalArg: a literal must already be of the parameter's type; anything else is evaluated, then checked. */
  private operandValue(dot: Value, operand: Operand, type: ParamType): Value {
    switch (operand.kind) {
      case 'dot':
        return checkType(dot, type);
      case 'field':
        return checkType(this.fieldChain(dot, operand.names, operand.text, [], MISSING), type);
      case 'variable': {
        const value = this.varValue(operand.name);
        return checkType(operand.names.length ? this.fieldChain(value, operand.names, operand.text, [], MISSING) : value, type);
      }
      case 'chain':
        return checkType(this.fieldChain(this.operandValue(dot, operand.base, 'any'), operand.names, operand.text, [], MISSING), type);
      case 'pipe':
        return checkType(this.pipeline(dot, operand.pipe), type);
      case 'identifier':
        return checkType(this.call(dot, operand.name, [], MISSING), type);
      case 'string':
      case 'number':
      case 'bool': {
        const literalType = { string: 'string', number: 'int', bool: 'bool' }[operand.kind];
        if (type !== 'any' && type !== literalType) throw new ExecError(`expected ${type === 'int' ? 'integer' : type}; found ${operand.text}`);
        return operand.value;
      }
    }
  }
}

/** Go's validateType for the types a template meets. */
function checkType(value: Value, type: ParamType): Value {
  if (type === 'any' || typeName(value) === type) return value;
  throw new ExecError(`wrong type for value; expected ${type}; got ${typeName(value)}`);
}
