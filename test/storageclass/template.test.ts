/**
 * Tag templates: the driver's function map (aws-ebs-csi-driver v1.64.0
 * pkg/util/template/funcs.go) and the Go text/template syntax around it, with the driver's
 * own test cases (template_test.go) among them. Bad templates fail with the offending
 * action; none is ever kept as literal text.
 */
import { describe, expect, it } from 'vitest';
import { evaluateTemplate, TemplateError, type TemplateData } from '../../lib/storageclass/index.js';

const data: TemplateData = { PVCName: 'ebs-claim', PVCNamespace: 'ns-prod-abcdef', PVName: 'pvc-0123' };

function run(template: string, overrides: Partial<TemplateData> = {}): string {
  return evaluateTemplate(template, { ...data, ...overrides });
}

function errorOf(template: string, overrides: Partial<TemplateData> = {}): TemplateError {
  try {
    run(template, overrides);
  } catch (error) {
    if (error instanceof TemplateError) return error;
    throw error;
  }
  throw new Error(`expected ${template} to fail`);
}

describe('the driver\'s functions -> evaluated as in Go', () => {
  it.each([
    // contains SUBSTR S
    { template: '{{ .PVCNamespace | contains "prod" }}', result: 'true' },
    { template: '{{ contains "dev" .PVCNamespace }}', result: 'false' },
    // toUpper / toLower (simple case mapping, as Go)
    { template: '{{ .PVCNamespace | toUpper }}', result: 'NS-PROD-ABCDEF' },
    { template: '{{ .PVCNamespace | toLower }}', overrides: { PVCNamespace: 'ns-PROD' }, result: 'ns-prod' },
    { template: '{{ toUpper "straße" }}', result: 'STRAßE' },
    { template: '{{ toLower "İ" }}', result: 'i' },
    // substring START END S (bytes)
    { template: '{{ .PVCNamespace | substring 0 4 }}', overrides: { PVCNamespace: 'prod-12345' }, result: 'prod' },
    { template: '{{ substring -1 3 .PVCName }}', result: 'ebs' },
    { template: '{{ substring 4 -1 .PVCName }}', result: 'claim' },
    { template: '{{ substring 4 100 .PVCName }}', result: 'claim' },
    // field DELIM IDX S
    { template: '{{ .PVCNamespace | field "-" 1 }}', overrides: { PVCNamespace: 'ns-prod-default' }, result: 'prod' },
    { template: '{{ .PVCNamespace | field "-" 2 | toUpper }}', result: 'ABCDEF' },
    { template: '{{ field "/" 0 .PVCName }}', result: 'ebs-claim' },
    { template: '{{ field "" 2 .PVCName }}', result: 's' },
    // index / lastIndex SUBSTR S (byte offsets; the driver's index replaces Go's)
    { template: '{{ index "-" .PVCNamespace }}', result: '2' },
    { template: '{{ lastIndex "-" .PVCNamespace }}', result: '7' },
    { template: '{{ index "zz" .PVCNamespace }}', result: '-1' },
    { template: '{{ index "b" "éb" }}', result: '2' },
  ])('$template -> $result', ({ template, overrides, result }) => {
    expect(run(template, overrides)).toBe(result);
  });
});

describe('Go text/template syntax -> as in the driver', () => {
  it.each([
    { name: 'no action -> the text unchanged', template: 'hello world', result: 'hello world' },
    { name: 'empty value -> empty', template: '', result: '' },
    { name: 'the three fields', template: '{{ .PVCName }}/{{ .PVCNamespace }}/{{ .PVName }}', result: 'ebs-claim/ns-prod-abcdef/pvc-0123' },
    { name: 'empty data (no extra-create-metadata) -> empty strings', template: '{{ .PVCNamespace }}{{ .PVCName }}', overrides: { PVCName: '', PVCNamespace: '' }, result: '' },
    { name: 'no spaces in the action', template: '{{.PVCName|toUpper}}', result: 'EBS-CLAIM' },
    { name: 'newlines inside an action', template: '{{\n.PVCName\n}}', result: 'ebs-claim' },
    { name: 'pipeline of three', template: '{{ .PVCNamespace | field "-" 1 | toUpper | printf "team-%s" }}', result: 'team-PROD' },
    { name: 'parenthesized call as an argument', template: '{{ printf "%s.%s" (toUpper .PVCName) .PVCNamespace }}', result: 'EBS-CLAIM.ns-prod-abcdef' },
    { name: 'if / else', template: '{{ if contains "prod" .PVCNamespace }}prod{{ else }}dev{{ end }}', result: 'prod' },
    { name: 'else if', template: '{{ if eq .PVCName "x" }}a{{ else if eq .PVCName "ebs-claim" }}b{{ else }}c{{ end }}', result: 'b' },
    { name: 'with sets dot', template: '{{ with .PVName }}{{ . }}{{ end }}', result: 'pvc-0123' },
    { name: 'with on empty -> else', template: '{{ with .PVCName }}x{{ else }}none{{ end }}', overrides: { PVCName: '' }, result: 'none' },
    { name: 'else with', template: '{{ with .PVCName }}{{ . }}{{ else with .PVName }}{{ . }}{{ end }}', overrides: { PVCName: '' }, result: 'pvc-0123' },
    { name: '$ is the data inside with', template: '{{ with .PVName }}{{ $.PVCName }}{{ end }}', result: 'ebs-claim' },
    { name: 'variable declared and used', template: '{{ $ns := .PVCNamespace }}{{ $ns | toUpper }}', result: 'NS-PROD-ABCDEF' },
    { name: 'variable assigned in a branch', template: '{{ $t := "dev" }}{{ if contains "prod" .PVCNamespace }}{{ $t = "prod" }}{{ end }}{{ $t }}', result: 'prod' },
    { name: 'and / or return an operand', template: '{{ or .PVCName "none" }}|{{ and .PVCName "" }}|{{ or "" "none" }}', overrides: { PVCName: '' }, result: 'none||none' },
    { name: 'and stops at the first empty operand', template: '{{ and "" (html) }}', result: '' },
    { name: 'not, eq with several operands, ne, lt, ge', template: '{{ not false }} {{ eq .PVCName "a" "ebs-claim" }} {{ ne 1 2 }} {{ lt "a" "b" }} {{ ge 3 3 }}', result: 'true true true true true' },
    { name: 'len is bytes', template: '{{ len .PVCName }} {{ len "é" }}', result: '9 2' },
    { name: 'slice of a string', template: '{{ slice .PVCName 4 }} {{ slice .PVCName 0 3 }}', result: 'claim ebs' },
    { name: 'print: spaces between non-strings only', template: '{{ print "a" 1 2 true "b" }}', result: 'a1 2 trueb' },
    { name: 'println', template: '{{ println "a" 1 }}', result: 'a 1\n' },
    { name: 'printf verbs and widths', template: '{{ printf "%v|%d|%t|%q|%x|%5s|%-5s|%03d" "v" 7 true "q" "hi" "r" "l" 7 }}', result: 'v|7|true|"q"|6869|    r|l    |007' },
    { name: 'printf %%', template: '{{ printf "100%%" }}', result: '100%' },
    { name: 'string, raw string, integer and bool constants', template: '{{ "a\\tb" }}{{ `c\\d` }}{{ -3 }}{{ true }}', result: 'a\tbc\\d-3true' },
    { name: 'comment', template: 'a{{/* a comment */}}b', result: 'ab' },
    { name: 'trim markers', template: 'a  {{- "b" -}}  c {{- /* x */ -}} d', result: 'abcd' },
    { name: '"}}" inside a string is not a delimiter', template: '{{ "}}" }}', result: '}}' },
    { name: 'a trailing pipe is accepted, as in Go', template: '{{ .PVCName | }}', result: 'ebs-claim' },
    { name: 'the data itself prints as Go prints the struct', template: '{{ . }}', result: '{ebs-claim ns-prod-abcdef pvc-0123}' },
    { name: 'a disabled function in a branch never run -> no error', template: '{{ if false }}{{ html "x" }}{{ end }}ok', result: 'ok' },
  ])('$name: $template -> $result', ({ template, overrides, result }) => {
    expect(run(template, overrides)).toBe(result);
  });
});

describe('bad templates -> TemplateError naming the action, never literal text', () => {
  it.each([
    // disabled functions
    { name: 'html disabled', template: '{{ .PVCNamespace | html }}', problem: /error calling html: cannot call 'html' function/ },
    { name: 'js disabled', template: '{{ .PVCNamespace | js }}', problem: /error calling js: cannot call 'js' function/ },
    { name: 'call disabled', template: '{{ .PVCNamespace | call }}', problem: /error calling call: cannot call 'call' function/ },
    { name: 'urlquery disabled', template: '{{ .PVCNamespace | urlquery }}', problem: /error calling urlquery: cannot call 'urlquery' function/ },
    // unknown names
    { name: 'unknown function (parse error, even in a branch never run)', template: '{{ if false }}{{ shout .PVCName }}{{ end }}', problem: /function "shout" not defined/ },
    { name: 'unknown field', template: '{{ .Foo }}', problem: /can't evaluate field Foo in type \*template\.PVProps/ },
    { name: 'field of a string', template: '{{ .PVCName.Length }}', problem: /can't evaluate field Length in type string/ },
    { name: 'undefined variable', template: '{{ $x }}', problem: /undefined variable "\$x"/ },
    { name: 'variable out of its scope', template: '{{ if true }}{{ $x := 1 }}{{ end }}{{ $x }}', problem: /undefined variable "\$x"/ },
    // syntax
    { name: 'unclosed action (the driver\'s test)', template: '{{ .PVCName }', problem: /unrecognized character in action/ },
    { name: 'unclosed action at the end', template: 'x-{{ .PVCName', problem: /unclosed action/ },
    { name: 'empty action', template: '{{ }}', problem: /missing value for command/ },
    { name: 'if without end', template: '{{ if true }}x', problem: /has no \{\{end\}\}/ },
    { name: 'end without if', template: 'x{{ end }}', problem: /unexpected \{\{end\}\}/ },
    { name: 'two else', template: '{{ if true }}a{{ else }}b{{ else }}c{{ end }}', problem: /expected \{\{end\}\}/ },
    { name: 'unterminated string', template: '{{ printf "%s }}', problem: /unterminated quoted string/ },
    { name: 'unclosed parenthesis', template: '{{ (toUpper .PVCName }}', problem: /unclosed left paren/ },
    { name: 'unclosed comment', template: '{{/* x }}', problem: /unclosed comment/ },
    { name: 'double pipe', template: '{{ .PVCName | | toUpper }}', problem: /unexpected "\|"/ },
    { name: 'constant after a pipe', template: '{{ .PVCName | "x" }}', problem: /non executable command in pipeline stage 2/ },
    { name: 'argument to a non-function', template: '{{ "a" "b" }}', problem: /can't give argument to non-function "a"/ },
    { name: 'argument to a field', template: '{{ .PVCName "x" }}', problem: /PVCName has arguments but cannot be invoked as function/ },
    // wrong argument types and counts
    { name: 'string where substring wants an int', template: '{{ substring "0" 4 .PVCName }}', problem: /expected integer; found "0"/ },
    { name: 'int where toUpper wants a string', template: '{{ toUpper 4 }}', problem: /expected string; found 4/ },
    { name: 'bool piped into toUpper', template: '{{ .PVCName | contains "e" | toUpper }}', problem: /wrong type for value; expected string; got bool/ },
    { name: 'int piped into field', template: '{{ len .PVCName | field "-" 0 }}', problem: /wrong type for value; expected string; got int/ },
    { name: 'too few arguments', template: '{{ field "-" .PVCName }}', problem: /wrong number of args for field: want 3 got 2/ },
    { name: 'too many arguments', template: '{{ .PVCName | toUpper "x" }}', problem: /wrong number of args for toUpper: want 1 got 2/ },
    { name: 'printf with a format that is not a string', template: '{{ printf 1 }}', problem: /expected string; found 1/ },
    // functions failing
    { name: 'field index past the end (the driver\'s test: empty namespace)', template: '{{ .PVCNamespace | field "-" 1 }}', overrides: { PVCNamespace: '' }, problem: /extractWord: cannot index into split string; index = 1, length = 1/ },
    { name: 'field with a negative index (a Go panic)', template: '{{ field "-" -1 .PVCName }}', problem: /index out of range \[-1\]/ },
    { name: 'substring start after end (a Go panic)', template: '{{ substring 5 2 .PVCName }}', problem: /slice bounds out of range \[5:2\]/ },
    { name: 'substring start past the string', template: '{{ substring 20 30 .PVCName }}', problem: /slice bounds out of range \[20:9\]/ },
    { name: 'substring negative start and end', template: '{{ substring -1 -1 .PVCName }}', problem: /slice bounds out of range \[:-1\]/ },
    { name: 'eq of a string and an int', template: '{{ eq .PVCName 1 }}', problem: /incompatible types for comparison/ },
    { name: 'lt of bools', template: '{{ lt true false }}', problem: /invalid type for comparison/ },
    { name: 'len of an int', template: '{{ len 3 }}', problem: /len of type int/ },
    { name: 'slice out of range', template: '{{ slice .PVCName 3 20 }}', problem: /index out of range: 20/ },
    // where Go would print an error marker into the tag, volhook refuses
    { name: 'printf verb of the wrong type', template: '{{ printf "%d" .PVCName }}', problem: /does not take a string/ },
    { name: 'printf argument missing', template: '{{ printf "%s-%s" .PVCName }}', problem: /has no argument/ },
    { name: 'printf argument extra', template: '{{ printf "%s" .PVCName .PVName }}', problem: /more than/ },
    // constructs volhook refuses
    { name: 'range', template: '{{ range .PVCName }}x{{ end }}', problem: /volhook does not support \{\{range\}\}/ },
    { name: 'define', template: '{{ define "t" }}x{{ end }}', problem: /volhook does not support \{\{define\}\}/ },
    { name: 'template', template: '{{ template "t" }}', problem: /volhook does not support \{\{template\}\}/ },
    { name: 'block', template: '{{ block "t" . }}x{{ end }}', problem: /volhook does not support \{\{block\}\}/ },
    { name: 'nil', template: '{{ nil }}', problem: /volhook does not support nil/ },
    { name: 'character constant', template: "{{ 'a' }}", problem: /character constants/ },
    { name: 'hexadecimal number', template: '{{ substring 0 0x4 .PVCName }}', problem: /only decimal integer constants/ },
    { name: 'number with a leading zero (octal in Go)', template: '{{ substring 0 010 .PVCName }}', problem: /only decimal integer constants/ },
    { name: 'a cut inside a multi-byte character', template: '{{ substring 0 1 "é" }}', problem: /splits a multi-byte character/ },
    { name: 'a byte escape that is not UTF-8', template: '{{ "\\xff" }}', problem: /not UTF-8/ },
  ])('$name: $template', ({ template, overrides, problem }) => {
    const error = errorOf(template, overrides);
    expect(error.message).toMatch(problem);
    expect(error.source).toBeDefined();
    expect(template).toContain(error.source!.slice(0, 4));
  });
});
