import { describe, expect, it } from 'vitest';
import { findBestMatch } from '../../../lib/local/controllers/index.js';
import type { MatchOptions, PersistentVolume, PersistentVolumeClaim } from '../../../lib/local/controllers/index.js';
import { claim, volume } from './fixtures.js';

interface Case {
  name: string;
  claim: PersistentVolumeClaim;
  volumes: PersistentVolume[];
  options?: MatchOptions;
  expected: string | undefined;
}

const gp3 = { className: 'gp3' };
const zoneA = { name: 'node-a', labels: { 'topology.kubernetes.io/zone': 'us-east-1a' } };

const cases: Case[] = [
  {
    name: 'several fit -> the smallest wins',
    claim: claim('c', { storage: '5Gi', ...gp3 }),
    volumes: [volume('big', { storage: '100Gi', ...gp3 }), volume('small', { storage: '8Gi', ...gp3 }), volume('mid', { storage: '20Gi', ...gp3 })],
    expected: 'small',
  },
  {
    name: 'equal sizes -> the first by name, whatever the list order',
    claim: claim('c', gp3),
    volumes: [volume('b', gp3), volume('a', gp3)],
    expected: 'a',
  },
  {
    name: 'capacity below the request -> skipped',
    claim: claim('c', { storage: '10Gi', ...gp3 }),
    volumes: [volume('small', { storage: '9Gi', ...gp3 })],
    expected: undefined,
  },
  {
    name: 'capacity in other units but enough -> fits',
    claim: claim('c', { storage: '10G', ...gp3 }),
    volumes: [volume('v', { storage: '10Gi', ...gp3 })],
    expected: 'v',
  },
  {
    name: 'selector does not match the labels -> skipped',
    claim: claim('c', { selector: { matchLabels: { tier: 'fast' } }, ...gp3 }),
    volumes: [volume('slow', { labels: { tier: 'slow' }, storage: '10Gi', ...gp3 }), volume('fast', { labels: { tier: 'fast' }, storage: '50Gi', ...gp3 })],
    expected: 'fast',
  },
  {
    name: 'class differs -> skipped',
    claim: claim('c', gp3),
    volumes: [volume('io2', { className: 'io2' }), volume('none')],
    expected: undefined,
  },
  {
    name: 'claim with class "" -> only a PV without class',
    claim: claim('c', { className: '' }),
    volumes: [volume('classed', gp3), volume('plain')],
    expected: 'plain',
  },
  {
    name: 'PV lacks a requested access mode -> skipped',
    claim: claim('c', { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], ...gp3 }),
    volumes: [volume('rwo', { accessModes: ['ReadWriteOnce'], ...gp3 }), volume('both', { accessModes: ['ReadOnlyMany', 'ReadWriteOnce'], storage: '50Gi', ...gp3 })],
    expected: 'both',
  },
  {
    name: 'volumeMode Block against a Filesystem claim -> skipped',
    claim: claim('c', gp3),
    volumes: [volume('block', { volumeMode: 'Block', ...gp3 })],
    expected: undefined,
  },
  {
    name: 'volumeMode unset on one side and Filesystem on the other -> same mode',
    claim: claim('c', { volumeMode: 'Filesystem', ...gp3 }),
    volumes: [volume('v', gp3)],
    expected: 'v',
  },
  {
    name: 'PV pre-bound to this claim by name (no uid) -> wins at once over a smaller Available one',
    claim: claim('c', { storage: '1Gi', ...gp3 }),
    volumes: [volume('small', { storage: '1Gi', ...gp3 }), volume('reserved', { storage: '100Gi', className: 'other', claimRef: { name: 'c' } })],
    expected: 'reserved',
  },
  {
    name: 'PV pre-bound to this claim by uid and still Pending (just provisioned) -> taken',
    claim: claim('c', gp3),
    volumes: [volume('pvc-uid-c', { claimRef: { name: 'c', uid: 'uid-c' }, phase: 'Pending', ...gp3 })],
    expected: 'pvc-uid-c',
  },
  {
    name: 'PV being deleted -> skipped, even when pre-bound',
    claim: claim('c', gp3),
    volumes: [volume('going', { deleting: true, claimRef: { name: 'c' }, ...gp3 })],
    expected: undefined,
  },
  {
    name: 'PV bound to another claim -> skipped',
    claim: claim('c', gp3),
    volumes: [volume('taken', { claimRef: { name: 'other', uid: 'uid-other' }, ...gp3 })],
    expected: undefined,
  },
  {
    name: 'PV bound to an earlier claim of the same name (other uid) -> skipped',
    claim: claim('c', gp3),
    volumes: [volume('old', { claimRef: { name: 'c', uid: 'uid-of-deleted-c' }, phase: 'Released', ...gp3 })],
    expected: undefined,
  },
  {
    name: 'PV not Available (Released, no claimRef) -> skipped',
    claim: claim('c', gp3),
    volumes: [volume('released', { phase: 'Released', ...gp3 })],
    expected: undefined,
  },
  {
    name: 'WaitForFirstConsumer without a node -> an Available PV waits',
    claim: claim('c', gp3),
    volumes: [volume('v', gp3)],
    options: { delayBinding: true },
    expected: undefined,
  },
  {
    name: 'WaitForFirstConsumer without a node -> a pre-bound PV is still taken',
    claim: claim('c', gp3),
    volumes: [volume('v', { claimRef: { name: 'c', uid: 'uid-c' }, ...gp3 })],
    options: { delayBinding: true },
    expected: 'v',
  },
  {
    name: 'chosen node outside the PV nodeAffinity -> skipped',
    claim: claim('c', gp3),
    volumes: [volume('b', { zone: 'us-east-1b', ...gp3 }), volume('a', { zone: 'us-east-1a', storage: '50Gi', ...gp3 })],
    options: { node: zoneA },
    expected: 'a',
  },
  {
    name: 'chosen node outside a pre-bound PV nodeAffinity -> no match at all',
    claim: claim('c', gp3),
    volumes: [volume('reserved', { zone: 'us-east-1b', claimRef: { name: 'c' }, ...gp3 }), volume('a', { zone: 'us-east-1a', ...gp3 })],
    options: { node: zoneA },
    expected: undefined,
  },
];

describe('findBestMatch', () => {
  it.each(cases)('$name', ({ claim: c, volumes, options, expected }) => {
    expect(findBestMatch(c, volumes, options)?.metadata.name).toBe(expected);
  });
});
