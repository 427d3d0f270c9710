/**
 * A registration's secrets must each decode to a 24–64 byte key (issue 8, point 6): the
 * registries refuse anything else as a malformed registration of that cluster (the app's 403),
 * without ever quoting the secret.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileRegistry, createStaticRegistry, parseRegistration, RegistrationError } from '../../lib/registry/index.js';

const GOOD = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const EMPTY_KEY = 'whsec_' + '!'.repeat(24);
const reg = (secrets: string[]) => ({ clusterId: 'c7', secrets, region: 'us-east-1' });

describe('registration secrets', () => {
  it.each([
    ['whsec_ + 32 random bytes (what npm run cluster writes)', GOOD],
    ['whsec_ + 24 bytes', `whsec_${Buffer.alloc(24, 1).toString('base64')}`],
    ['whsec_ + 64 bytes', `whsec_${Buffer.alloc(64, 1).toString('base64')}`],
    ['a raw secret of 24 UTF-8 bytes', 'raw-secret-of-24-bytes!!'],
  ])('%s -> accepted', (_name, secret) => {
    expect(parseRegistration('c7', reg([secret])).secrets).toEqual([secret]);
  });

  it.each([
    ['whsec_ + non-base64 characters (an empty key)', EMPTY_KEY],
    ['whsec_ + 23 bytes', `whsec_${Buffer.alloc(23, 1).toString('base64')}`],
    ['whsec_ + 65 bytes', `whsec_${Buffer.alloc(65, 1).toString('base64')}`],
    ['a raw secret of 20 bytes (passed the old 16-character check)', 'a-secret-of-20-bytes'],
  ])('%s -> RegistrationError naming the cluster and the secret’s place, not its value', (_name, secret) => {
    let error: unknown;
    try {
      parseRegistration('c7', reg([GOOD, secret]));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(RegistrationError);
    expect((error as Error).message).toMatch(/^registration of cluster "c7" is malformed:\n✖ unusable webhook secret.*\n\s+→ at secrets\[1\]/);
    expect((error as Error).message).not.toContain(secret.slice(6));
  });

  it('the static and file registries refuse an empty-key secret the same way', async () => {
    await expect(createStaticRegistry([reg([EMPTY_KEY])]).get('c7')).rejects.toThrow(RegistrationError);
    const file = join(mkdtempSync(join(tmpdir(), 'volhook-registry-')), 'clusters.json');
    writeFileSync(file, JSON.stringify({ clusters: { c7: reg([EMPTY_KEY]) } }));
    await expect(createFileRegistry(file).get('c7')).rejects.toThrow(/cluster "c7" is malformed:\n[^]*→ at secrets\[0\]/);
  });
});

describe('writeBack: direct needs the API server it writes to', () => {
  it('direct without kubernetes.server -> RegistrationError naming kubernetes.server; direct with it, and forwarder without it -> accepted', () => {
    expect(() => parseRegistration('c7', { ...reg([GOOD]), writeBack: 'direct' })).toThrow(/→ at kubernetes\.server/);
    expect(() => parseRegistration('c7', { ...reg([GOOD]), writeBack: 'direct', kubernetes: { token: 't' } })).toThrow(RegistrationError);
    expect(parseRegistration('c7', { ...reg([GOOD]), writeBack: 'direct', kubernetes: { server: 'https://127.0.0.1:6443' } }).kubernetes?.server).toBe('https://127.0.0.1:6443');
    expect(parseRegistration('c7', reg([GOOD])).writeBack).toBe('forwarder');
  });
});
