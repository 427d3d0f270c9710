/**
 * Go text/template's lexer (text/template/parse/lex.go), for the default `{{` `}}` delimiters:
 * the template becomes text segments and actions, each action a list of tokens. Trim markers
 * (`{{- ` and ` -}}`) are applied to the neighbouring text here, and comments (`{{/* … *\/}}`)
 * vanish, as in Go.
 */
import { TemplateError } from './errors.js';

export type Keyword = 'if' | 'else' | 'end' | 'with' | 'range' | 'define' | 'template' | 'block' | 'break' | 'continue';

const KEYWORDS: ReadonlySet<string> = new Set<Keyword>(['if', 'else', 'end', 'with', 'range', 'define', 'template', 'block', 'break', 'continue']);

export type Token = { text: string } & (
  | { kind: 'space' }
  | { kind: 'field' } // `.Name`: text is the name with its dot
  | { kind: 'variable' } // `$x`, `$`
  | { kind: 'identifier' }
  | { kind: 'keyword'; keyword: Keyword }
  | { kind: 'bool'; value: boolean }
  | { kind: 'number' }
  | { kind: 'string' } // text is the quoted literal, quotes included
  | { kind: 'rawString' }
  | { kind: 'char' }
  | { kind: 'dot' }
  | { kind: 'nil' }
  | { kind: 'pipe' }
  | { kind: 'declare' }
  | { kind: 'assign' }
  | { kind: 'leftParen' }
  | { kind: 'rightParen' }
  | { kind: 'comma' }
);

export type Segment = { kind: 'text'; text: string } | { kind: 'action'; source: string; tokens: Token[] };

const LEFT = '{{';
const RIGHT = '}}';
/** Go's `spaceChars`: what trim markers remove and what separates tokens in an action. */
const SPACE = /[ \t\r\n]/;
const isSpace = (c: string | undefined) => c !== undefined && SPACE.test(c);
const isAlphaNumeric = (c: string) => /^[\p{L}\p{Nd}_]$/u.test(c);

/** Splits a template into text and actions, or throws a TemplateError naming the broken action. */
export function lex(template: string): Segment[] {
  const segments: Segment[] = [];
  let pos = 0;
  let trimNext = false;

  const pushText = (text: string) => {
    if (text !== '') segments.push({ kind: 'text', text });
  };

  while (pos < template.length) {
    const left = template.indexOf(LEFT, pos);
    let text = template.slice(pos, left < 0 ? template.length : left);
    if (trimNext) text = text.replace(/^[ \t\r\n]+/, '');
    if (left < 0) {
      pushText(text);
      break;
    }
    let at = left + LEFT.length;
    const trimLeft = template[at] === '-' && isSpace(template[at + 1]);
    if (trimLeft) {
      text = text.replace(/[ \t\r\n]+$/, '');
      at += 2;
    }
    pushText(text);

    if (template.startsWith('/*', at)) {
      const end = template.indexOf('*/', at + 2);
      if (end < 0) throw new TemplateError('unclosed comment', template.slice(left));
      const delim = rightDelimAt(template, end + 2);
      if (!delim) throw new TemplateError('comment ends before closing delimiter', template.slice(left, end + 2));
      pos = end + 2 + delim.length;
      trimNext = delim.trim;
      continue;
    }

    const action = lexAction(template, left, at);
    segments.push({ kind: 'action', source: template.slice(left, action.end), tokens: action.tokens });
    pos = action.end;
    trimNext = action.trimRight;
  }
  return segments;
}

/** `}}` or ` -}}` at `pos`: its length and whether it trims the text after it. */
function rightDelimAt(s: string, pos: number): { length: number; trim: boolean } | undefined {
  if (isSpace(s[pos]) && s[pos + 1] === '-' && s.startsWith(RIGHT, pos + 2)) return { length: 2 + RIGHT.length, trim: true };
  if (s.startsWith(RIGHT, pos)) return { length: RIGHT.length, trim: false };
  return undefined;
}

interface LexedAction {
  tokens: Token[];
  /** Just past the closing delimiter. */
  end: number;
  trimRight: boolean;
}

function lexAction(s: string, left: number, start: number): LexedAction {
  const tokens: Token[] = [];
  let pos = start;
  let parenDepth = 0;
  const fail = (problem: string, upTo = pos): never => {
    throw new TemplateError(problem, s.slice(left, Math.max(upTo, left + LEFT.length)));
  };
  const emit = (token: Token, length: number) => {
    tokens.push(token);
    pos += length;
  };
  const lexNumber = () => {
    const text = scanNumber(s, pos);
    if (!atTerminator(pos + text.length)) fail(`bad number syntax: ${JSON.stringify(s.slice(pos, pos + text.length + 1))}`, pos + text.length + 1);
    emit({ kind: 'number', text }, text.length);
  };
  /** Go's atTerminator: what may follow a field, variable or identifier. */
  const atTerminator = (p: number) => {
    const c = s[p];
    return c === undefined || isSpace(c) || '.,|:)('.includes(c) || s.startsWith(RIGHT, p);
  };

  for (;;) {
    const delim = rightDelimAt(s, pos);
    if (delim) {
      if (parenDepth > 0) fail('unclosed left paren', pos + delim.length);
      return { tokens, end: pos + delim.length, trimRight: delim.trim };
    }
    const c = s[pos];
    if (c === undefined) return fail('unclosed action', s.length);

    if (isSpace(c)) {
      let end = pos;
      while (isSpace(s[end])) end++;
      // " -}}": the last space belongs to the trim marker.
      if (s[end] === '-' && s.startsWith(RIGHT, end + 1)) {
        if (end - 1 > pos) tokens.push({ kind: 'space', text: s.slice(pos, end - 1) });
        pos = end - 1;
        continue;
      }
      emit({ kind: 'space', text: s.slice(pos, end) }, end - pos);
      continue;
    }
    switch (c) {
      case '=':
        emit({ kind: 'assign', text: '=' }, 1);
        continue;
      case ':':
        if (s[pos + 1] !== '=') fail('expected :=', pos + 1);
        emit({ kind: 'declare', text: ':=' }, 2);
        continue;
      case '|':
        emit({ kind: 'pipe', text: '|' }, 1);
        continue;
      case ',':
        emit({ kind: 'comma', text: ',' }, 1);
        continue;
      case '(':
        parenDepth++;
        emit({ kind: 'leftParen', text: '(' }, 1);
        continue;
      case ')':
        parenDepth--;
        if (parenDepth < 0) fail('unexpected right paren', pos + 1);
        emit({ kind: 'rightParen', text: ')' }, 1);
        continue;
      case '"': {
        let end = pos + 1;
        for (;;) {
          const d = s[end];
          if (d === undefined || d === '\n') fail('unterminated quoted string', end);
          if (d === '\\') {
            if (s[end + 1] === undefined || s[end + 1] === '\n') fail('unterminated quoted string', end + 1);
            end += 2;
            continue;
          }
          end++;
          if (d === '"') break;
        }
        emit({ kind: 'string', text: s.slice(pos, end) }, end - pos);
        continue;
      }
      case '`': {
        const end = s.indexOf('`', pos + 1);
        if (end < 0) fail('unterminated raw quoted string', s.length);
        emit({ kind: 'rawString', text: s.slice(pos, end + 1) }, end + 1 - pos);
        continue;
      }
      case "'": {
        let end = pos + 1;
        for (;;) {
          const d = s[end];
          if (d === undefined || d === '\n') fail('unterminated character constant', end);
          if (d === '\\') {
            end += 2;
            continue;
          }
          end++;
          if (d === "'") break;
        }
        emit({ kind: 'char', text: s.slice(pos, end) }, end - pos);
        continue;
      }
      case '$':
      case '.': {
        if (c === '.' && /[0-9]/.test(s[pos + 1] ?? '')) {
          lexNumber();
          continue;
        }
        let end = pos + 1;
        while (end < s.length && isAlphaNumeric(charAt(s, end))) end += charAt(s, end).length;
        if (!atTerminator(end)) fail(`bad character ${JSON.stringify(charAt(s, end))}`, end + 1);
        const text = s.slice(pos, end);
        if (c === '$') emit({ kind: 'variable', text }, text.length);
        else emit(text === '.' ? { kind: 'dot', text } : { kind: 'field', text }, text.length);
        continue;
      }
    }
    if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
      lexNumber();
      continue;
    }
    if (isAlphaNumeric(charAt(s, pos))) {
      let end = pos;
      while (end < s.length && isAlphaNumeric(charAt(s, end))) end += charAt(s, end).length;
      if (!atTerminator(end)) fail(`bad character ${JSON.stringify(charAt(s, end))}`, end + 1);
      const word = s.slice(pos, end);
      if (KEYWORDS.has(word)) emit({ kind: 'keyword', keyword: word as Keyword, text: word }, word.length);
      else if (word === 'true' || word === 'false') emit({ kind: 'bool', value: word === 'true', text: word }, word.length);
      else if (word === 'nil') emit({ kind: 'nil', text: word }, word.length);
      else emit({ kind: 'identifier', text: word }, word.length);
      continue;
    }
    fail(`unrecognized character in action: ${JSON.stringify(charAt(s, pos))}`, pos + 1);
  }
}

/** The code point at `pos` as a string (one or two UTF-16 units). */
function charAt(s: string, pos: number): string {
  return String.fromCodePoint(s.codePointAt(pos) ?? 0);
}

/**
 * What Go's scanNumber consumes: a sign, then digits, letters, `_` and `.`, and a sign right
 * after an exponent letter. Whether it is a number volhook accepts is the parser's business.
 */
function scanNumber(s: string, pos: number): string {
  let end = pos;
  if (s[end] === '+' || s[end] === '-') end++;
  while (end < s.length) {
    const c = s[end]!;
    if (/[0-9A-Za-z_.]/.test(c)) {
      end++;
      continue;
    }
    if ((c === '+' || c === '-') && /[eEpP]/.test(s[end - 1]!)) {
      end++;
      continue;
    }
    break;
  }
  return s.slice(pos, end);
}
