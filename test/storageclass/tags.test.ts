import { describe, expect, it } from 'vitest';
import { expectParameterError, spec } from './helpers.js';

describe('tagSpecification*', () => {
  it.each([
    { name: 'plain key=value -> tag', parameters: { tagSpecification_1: 'team=payments' }, tags: { team: 'payments' } },
    { name: 'several specifications -> all tags', parameters: { tagSpecification_1: 'team=payments', tagSpecification_2: 'env=prod' }, tags: { team: 'payments', env: 'prod' } },
    { name: 'value with "=" -> split at the first', parameters: { tagSpecification_1: 'query=a=b' }, tags: { query: 'a=b' } },
    { name: 'empty value -> empty tag value', parameters: { tagSpecification_1: 'flag=' }, tags: { flag: '' } },
    { name: '{{ .PVCName }} -> claim name', parameters: { tagSpecification_1: 'claim={{ .PVCName }}' }, tags: { claim: 'data-db-0' } },
    { name: '{{ .PVCNamespace }} -> claim namespace', parameters: { tagSpecification_1: 'ns={{ .PVCNamespace }}' }, tags: { ns: 'shop' } },
    { name: '{{ .PVName }} -> PV name', parameters: { tagSpecification_1: 'pv={{ .PVName }}' }, tags: { pv: 'pvc-6f1c2a1e-0000-4000-8000-000000000001' } },
    { name: 'no spaces inside braces -> expanded', parameters: { tagSpecification_1: 'claim={{.PVCName}}' }, tags: { claim: 'data-db-0' } },
    { name: 'extra spaces inside braces -> expanded', parameters: { tagSpecification_1: 'claim={{   .PVCName\t}}' }, tags: { claim: 'data-db-0' } },
    { name: 'several templates with text -> all expanded', parameters: { tagSpecification_1: 'Name={{ .PVCNamespace }}/{{ .PVCName }} ({{ .PVName }})' }, tags: { Name: 'shop/data-db-0 (pvc-6f1c2a1e-0000-4000-8000-000000000001)' } },
    { name: 'non-numeric suffix -> still a tag specification', parameters: { tagSpecification_owner: 'owner=me' }, tags: { owner: 'me' } },
    { name: 'no underscore (the driver\'s prefix is "tagSpecification") -> a tag specification', parameters: { tagSpecification1: 'a=b' }, tags: { a: 'b' } },
    { name: 'the bare prefix -> a tag specification', parameters: { tagSpecification: 'a=b' }, tags: { a: 'b' } },
    { name: 'prefix and a bare underscore -> a tag specification', parameters: { tagSpecification_: 'a=b' }, tags: { a: 'b' } },
    { name: 'a function in the value -> evaluated', parameters: { tagSpecification_1: 'ns={{ .PVCNamespace | toUpper }}' }, tags: { ns: 'SHOP' } },
    { name: 'printf -> evaluated', parameters: { tagSpecification_1: 'x={{ printf "%s-%s" .PVCNamespace .PVCName }}' }, tags: { x: 'shop-data-db-0' } },
    { name: 'template syntax in the key -> kept literally (only values are templates)', parameters: { tagSpecification_1: '{{ .PVCName }}=v' }, tags: { '{{ .PVCName }}': 'v' } },
    { name: 'key that only resembles a reserved one -> allowed', parameters: { tagSpecification_1: 'ebs.csi.aws.com=x', tagSpecification_2: 'team/kubernetes.io=y', tagSpecification_3: 'kubernetes-io=z' }, tags: { 'ebs.csi.aws.com': 'x', 'team/kubernetes.io': 'y', 'kubernetes-io': 'z' } },
    { name: 'no tag specifications -> no tags', parameters: {}, tags: {} },
  ])('$name', ({ parameters, tags }) => {
    expect(spec(parameters).tags).toStrictEqual(tags);
  });

  it.each([
    { name: 'no "=" -> error', value: 'team', problem: /must be key=value/ },
    { name: 'empty key -> error', value: '=value', problem: /tag key before "=" is empty/ },
    { name: 'reserved CSIVolumeName -> error', value: 'CSIVolumeName=x', problem: /"CSIVolumeName" is reserved/ },
    { name: 'reserved CSIVolumeName in other case -> error', value: 'csivolumename=x', problem: /is reserved/ },
    { name: 'reserved CSIVolumeSnapshotName -> error', value: 'CSIVolumeSnapshotName=x', problem: /is reserved/ },
    { name: 'reserved kubernetes.io/cluster/… -> error', value: 'kubernetes.io/cluster/prod=owned', problem: /is reserved/ },
    { name: 'reserved kubernetes.io/created-for/pvc/name -> error', value: 'kubernetes.io/created-for/pvc/name=x', problem: /is reserved/ },
    { name: 'reserved ebs.csi.aws.com/cluster -> error', value: 'ebs.csi.aws.com/cluster=true', problem: /is reserved/ },
    { name: 'reserved ebs.csi.aws.com/ in capitals -> error', value: 'EBS.CSI.AWS.COM/cluster=true', problem: /is reserved/ },
    { name: 'reserved aws: prefix -> error', value: 'aws:cloudformation:stack-name=x', problem: /is reserved/ },
    { name: 'unknown template field -> error naming the action', value: 'x={{ .Namespace }}', problem: /tag value template \{\{ \.Namespace \}\}: .*can't evaluate field Namespace in type \*template\.PVProps/ },
    { name: 'template field in wrong case -> error', value: 'x={{ .pvcname }}', problem: /can't evaluate field pvcname/ },
    { name: 'unknown function -> error', value: 'x={{ .PVCName | shout }}', problem: /function "shout" not defined/ },
    { name: 'empty action -> error', value: 'x={{}}', problem: /missing value for command/ },
    { name: 'unclosed action -> error, never literal text', value: 'x={{ .PVCName', problem: /\{\{ \.PVCName: unclosed action/ },
    { name: 'tag key over 128 characters -> error', value: `${'k'.repeat(129)}=v`, problem: /longer than EC2's 128/ },
    { name: 'tag value over 256 characters after expansion -> error', value: `v=${'x'.repeat(250)}{{ .PVCName }}`, problem: /longer than EC2's 256/ },
  ])('$name', ({ value, problem }) => {
    expectParameterError(() => spec({ tagSpecification_1: value }), 'tagSpecification_1', problem);
  });

  it('same tag key in two specifications -> error naming the second', () => {
    expectParameterError(
      () => spec({ tagSpecification_1: 'team=a', tagSpecification_2: 'team=b' }),
      'tagSpecification_2',
      /"team" is already set by tagSpecification_1/,
    );
  });

  it('128-character key and 256-character value -> accepted at the limit', () => {
    const key = 'k'.repeat(128);
    expect(spec({ tagSpecification_1: `${key}=${'v'.repeat(256)}` }).tags[key]).toHaveLength(256);
  });
});
