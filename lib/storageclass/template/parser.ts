/**
 * Go text/template's parser (text/template/parse/parse.go) for the part of the language a tag
 * template can use: text, actions with pipelines, variables, parenthesized pipelines, and
 * `if`/`else if`/`else`/`with`/`else with`/`end`. Unknown functions and undefined variables
 * are parse errors, as in Go — even in a branch that never runs.
 *
 * Refused, with the action that uses them: `range`, `break`, `continue`, `define`,
 * `template`, `block`, `nil`, character constants and numbers other than decimal integers.
 * Tag templates have no list to range over and no second template to call; refusing keeps the
 * evaluator small enough to check against Go line by line.
 */
import { TemplateError } from './errors.js';
import { isFunction } from './functions.js';
import { lex, type Token } from './lexer.js';

export type Operand = { text: string } & (
  | { kind: 'field'; names: string[] } // .A.B: fields of dot
  | { kind: 'variable'; name: string; names: string[] } // $x.A
  | { kind: 'chain'; base: Operand; names: string[] } // (pipeline).A
  | { kind: 'dot' }
  | { kind: 'identifier'; name: string }
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'pipe'; pipe: Pipeline }
);

export interface Command {
  args: Operand[];
}

export interface Pipeline {
  /** `$x := …` declares, `$x = …` assigns; either prints nothing. */
  decl?: { variable: string; assign: boolean };
  cmds: Command[];
}

export type Node =
  | { kind: 'text'; text: string }
  | { kind: 'action'; source: string; pipe: Pipeline }
  | { kind: 'if' | 'with'; source: string; pipe: Pipeline; list: Node[]; elseList?: Node[] };

/** Deepest nesting of parentheses and control structures volhook parses. */
const MAX_DEPTH = 100;

const UNSUPPORTED_KEYWORDS = new Set(['range', 'break', 'continue', 'define', 'template', 'block']);

type Segments = ReturnType<typeof lex>;
type ActionSegment = Extract<Segments[number], { kind: 'action' }>;

/** Parses a template; throws TemplateError naming the action at fault. */
export function parse(template: string): Node[] {
  const parser = new Parser(lex(template));
  const { nodes, stop } = parser.list(0);
  if (stop) throw new TemplateError(`unexpected {{${stop.keyword}}}`, stop.action.source);
  return nodes;
}

interface Stop {
  keyword: 'else' | 'end';
  action: ActionSegment;
  /** After `else`, the tokens that follow it (`if …` in `{{ else if … }}`). */
  cursor: Cursor;
}

class Parser {
  private next = 0;
  /** Declared variables, innermost last; `$` is always there. */
  private vars: string[] = ['$'];

  constructor(private readonly segments: Segments) {}

  /** Nodes up to the end of the template or an `{{else}}` / `{{end}}`, which it returns. */
  list(depth: number): { nodes: Node[]; stop?: Stop } {
    if (depth > MAX_DEPTH) throw new TemplateError(`more than ${MAX_DEPTH} nested control structures`);
    const nodes: Node[] = [];
    while (this.next < this.segments.length) {
      const segment = this.segments[this.next++]!;
      if (segment.kind === 'text') {
        nodes.push({ kind: 'text', text: segment.text });
        continue;
      }
      const cursor = new Cursor(segment);
      const first = cursor.peekNonSpace();
      if (first?.kind === 'keyword') {
        cursor.nextNonSpace();
        switch (first.keyword) {
          case 'end':
            cursor.expectEnd('end');
            return { nodes, stop: { keyword: 'end', action: segment, cursor } };
          case 'else':
            return { nodes, stop: { keyword: 'else', action: segment, cursor } };
          case 'if':
          case 'with':
            nodes.push(this.control(first.keyword, segment, cursor, depth));
            continue;
          default:
            throw new TemplateError(`volhook does not support {{${first.keyword}}} in tag templates`, segment.source);
        }
      }
      nodes.push({ kind: 'action', source: segment.source, pipe: this.pipeline(cursor, 'command', 0) });
    }
    return { nodes };
  }

  /** `if`/`with` after its keyword, through the `{{end}}` that closes it. */
  private control(kind: 'if' | 'with', action: ActionSegment, cursor: Cursor, depth: number): Node {
    const mark = this.vars.length;
    try {
      const pipe = this.pipeline(cursor, kind, 0);
      const body = this.list(depth + 1);
      if (!body.stop) throw new TemplateError(`unexpected EOF: {{${kind}}} has no {{end}}`, action.source);
      const node: Node = { kind, source: action.source, pipe, list: body.nodes };
      if (body.stop.keyword === 'end') return node;

      const elseAction = body.stop.action;
      const after = body.stop.cursor.peekNonSpace();
      const nested = after?.kind === 'keyword' && (after.keyword === 'if' || after.keyword === 'with') ? after.keyword : undefined;
      if (nested === kind) {
        // `{{else if …}}` / `{{else with …}}`: a nested control that consumes the shared {{end}}.
        body.stop.cursor.nextNonSpace();
        return { ...node, elseList: [this.control(kind, elseAction, body.stop.cursor, depth + 1)] };
      }
      // Otherwise, as in Go, `{{else with …}}` inside an `if` (and the reverse) reads as
      // `{{else}}{{with …}}`: the nested control needs an {{end}} of its own.
      let first: Node | undefined;
      if (nested) {
        body.stop.cursor.nextNonSpace();
        first = this.control(nested, elseAction, body.stop.cursor, depth + 1);
      } else {
        body.stop.cursor.expectEnd('else');
      }
      const elseBody = this.list(depth + 1);
      if (elseBody.stop?.keyword !== 'end') {
        throw new TemplateError('expected {{end}} after {{else}}', elseBody.stop?.action.source ?? elseAction.source);
      }
      return { ...node, elseList: first ? [first, ...elseBody.nodes] : elseBody.nodes };
    } finally {
      this.vars.length = mark;
    }
  }

  /** A pipeline up to the end of the action (or the `)` closing it, when `depth` > 0). */
  private pipeline(cursor: Cursor, context: string, depth: number): Pipeline {
    if (depth > MAX_DEPTH) cursor.fail(`more than ${MAX_DEPTH} nested parentheses`);
    const pipe: Pipeline = { cmds: [] };
    const first = cursor.peekNonSpace();
    if (first?.kind === 'variable') {
      const save = cursor.position;
      cursor.nextNonSpace();
      const following = cursor.peekNonSpace();
      if (following?.kind === 'declare' || following?.kind === 'assign') {
        cursor.nextNonSpace();
        pipe.decl = { variable: first.text, assign: following.kind === 'assign' };
        this.vars.push(first.text);
      } else if (following?.kind === 'comma') {
        cursor.fail(`volhook does not support declaring two variables (that is for {{range}})`);
      } else {
        cursor.position = save;
      }
    }
    for (;;) {
      const token = cursor.nextNonSpace();
      if (token === undefined || (depth > 0 && token.kind === 'rightParen')) {
        if (depth > 0 && token === undefined) cursor.fail('unclosed left paren');
        this.checkPipeline(pipe, context, cursor);
        return pipe;
      }
      if (!startsOperand(token)) cursor.fail(`unexpected ${describe(token)} in ${context}`);
      cursor.back();
      pipe.cmds.push(this.command(cursor, depth));
    }
  }

  private checkPipeline(pipe: Pipeline, context: string, cursor: Cursor): void {
    if (pipe.cmds.length === 0) cursor.fail(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((cmd, i) => {
      if (['bool', 'dot', 'number', 'string'].includes(cmd.args[0]!.kind)) {
        cursor.fail(`non executable command in pipeline stage ${i + 2}`);
      }
    });
  }

  private command(cursor: Cursor, depth: number): Command {
    const args: Operand[] = [];
    for (;;) {
      cursor.peekNonSpace();
      const operand = this.operand(cursor, depth);
      if (operand) args.push(operand);
      const token = cursor.next();
      if (token?.kind === 'space') continue;
      if (token === undefined || token.kind === 'rightParen') cursor.back();
      else if (token.kind !== 'pipe') cursor.fail(`unexpected ${describe(token)} in operand`);
      break;
    }
    if (args.length === 0) cursor.fail('empty command');
    return { args };
  }

  private operand(cursor: Cursor, depth: number): Operand | undefined {
    const term = this.term(cursor, depth);
    if (!term || cursor.peek()?.kind !== 'field') return term;
    const names: string[] = [];
    let text = term.text;
    while (cursor.peek()?.kind === 'field') {
      const field = cursor.next()!.text;
      names.push(field.slice(1));
      text += field;
    }
    switch (term.kind) {
      case 'field':
      case 'variable':
        return { ...term, text, names: [...term.names, ...names] };
      case 'bool':
      case 'string':
      case 'number':
      case 'dot':
        return cursor.fail(`unexpected . after term ${JSON.stringify(term.text)}`);
      default:
        return { kind: 'chain', text, base: term, names };
    }
  }

  private term(cursor: Cursor, depth: number): Operand | undefined {
    const token = cursor.nextNonSpace();
    if (token === undefined) return undefined;
    const { text } = token;
    switch (token.kind) {
      case 'identifier':
        if (!isFunction(text)) cursor.fail(`function ${JSON.stringify(text)} not defined`);
        return { kind: 'identifier', text, name: text };
      case 'dot':
        return { kind: 'dot', text };
      case 'variable':
        if (!this.vars.includes(text)) cursor.fail(`undefined variable ${JSON.stringify(text)}`);
        return { kind: 'variable', text, name: text, names: [] };
      case 'field':
        return { kind: 'field', text, names: [text.slice(1)] };
      case 'bool':
        return { kind: 'bool', text, value: token.value };
      case 'number':
        return { kind: 'number', text, value: integer(text, cursor) };
      case 'string':
      case 'rawString':
        return { kind: 'string', text, value: unquote(text, cursor) };
      case 'leftParen': {
        const start = cursor.position;
        const pipe = this.pipeline(cursor, 'parenthesized pipeline', depth + 1);
        return { kind: 'pipe', text: `(${cursor.textFrom(start)}`, pipe };
      }
      case 'nil':
        return cursor.fail('volhook does not support nil in tag templates');
      case 'char':
        return cursor.fail(`volhook does not support character constants (${text}) in tag templates`);
      default:
        cursor.back();
        return undefined;
    }
  }
}

function startsOperand(token: Token): boolean {
  return ['bool', 'char', 'dot', 'field', 'identifier', 'number', 'nil', 'rawString', 'string', 'variable', 'leftParen'].includes(token.kind);
}

function describe(token: Token): string {
  return token.kind === 'space' ? 'space' : JSON.stringify(token.text);
}

/** A decimal integer constant; Go's other number forms are refused, not misread. */
function integer(text: string, cursor: Cursor): number {
  if (!/^[+-]?(0|[1-9][0-9]*)$/.test(text)) {
    return cursor.fail(`volhook supports only decimal integer constants in tag templates, not ${text}`);
  }
  const value = Number(text);
  if (!Number.isSafeInteger(value)) return cursor.fail(`${text} is too large an integer for volhook`);
  return value;
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"',
};

/**
 * Go's strconv.Unquote for "…" and `…` literals. `\x` and octal escapes above 0x7f make raw
 * bytes in Go — possibly invalid UTF-8 — and are refused; `\u`/`\U` give characters.
 */
function unquote(text: string, cursor: Cursor): string {
  if (text.startsWith('`')) return text.slice(1, -1).replaceAll('\r', '');
  const body = text.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i] ?? '';
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const hex = { x: 2, u: 4, U: 8 }[e];
    const digits = hex ? body.slice(i + 1, i + 1 + hex) : body.slice(i, i + 3);
    const pattern = hex ? new RegExp(`^[0-9a-fA-F]{${hex}}$`) : /^[0-7]{3}$/;
    if (!pattern.test(digits)) return cursor.fail(`invalid escape in string ${text}`);
    const code = parseInt(digits, hex ? 16 : 8);
    if ((e === 'x' || !hex) && code > 0x7f) return cursor.fail(`volhook refuses byte escapes above \\x7f (${text}): they are not UTF-8`);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return cursor.fail(`invalid escape in string ${text}`);
    out += String.fromCodePoint(code);
    i += hex ? hex : 2;
  }
  return out;
}

/** Go's token stream for one action, with peek and back-up. */
class Cursor {
  position = 0;
  private readonly tokens: readonly Token[];

  constructor(private readonly action: ActionSegment) {
    this.tokens = action.tokens;
  }

  peek(): Token | undefined {
    return this.tokens[this.position];
  }

  next(): Token | undefined {
    return this.tokens[this.position++];
  }

  back(): void {
    this.position--;
  }

  /** The source of the tokens from `start` up to the current position. */
  textFrom(start: number): string {
    return this.tokens
      .slice(start, this.position)
      .map((token) => token.text)
      .join('');
  }

  nextNonSpace(): Token | undefined {
    let token = this.next();
    while (token?.kind === 'space') token = this.next();
    return token;
  }

  peekNonSpace(): Token | undefined {
    const token = this.nextNonSpace();
    if (token !== undefined) this.back();
    return token;
  }

  /** Only spaces may follow `{{end}}` / `{{else}}`. */
  expectEnd(keyword: string): void {
    const token = this.nextNonSpace();
    if (token !== undefined) this.fail(`unexpected ${describe(token)} in ${keyword}`);
  }

  fail(problem: string): never {
    throw new TemplateError(problem, this.action.source);
  }
}
