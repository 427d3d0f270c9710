/** lib/contract/version.ts, semver.ts and the v1h signature: which versions work together. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compareSemver,
  CONTRACT_VERSIONS,
  contractRefusal,
  ContractRefusalSchema,
  contractVerdict,
  parseSemver,
  readRequestVersions,
  secretFingerprint,
  SignatureError,
  sign,
  SUPPORTED_CONTRACTS,
  verify,
  VersionHeaders,
  VOLHOOK_VERSION,
  worksWith,
} from '../../lib/contract/index.js';

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
const now = 1_800_000_000;
const versions = { contract: 2, forwarderVersion: '0.2.0' };

describe('the versions', () => {
  it("VOLHOOK_VERSION -> package.json's version; the contracts served -> the current and the previous one, contract 2 and 1", () => {
    expect(VOLHOOK_VERSION).toBe(packageVersion);
    expect(CONTRACT_VERSIONS).toEqual({ current: 2, previous: 1 });
    expect(SUPPORTED_CONTRACTS).toEqual([1, 2]);
  });
});

describe('semver', () => {
  it('versions in the order of semver.org section 11 -> each compares lower than the next; build metadata ranks the same', () => {
    const ordered = ['0.1.0', '0.2.0-alpha', '0.2.0-alpha.1', '0.2.0-alpha.beta', '0.2.0-beta.2', '0.2.0-beta.11', '0.2.0-rc.1', '0.2.0', '0.10.0', '1.0.0'];
    const parsed = ordered.map((v) => parseSemver(v)!);
    for (let i = 1; i < parsed.length; i++) expect(compareSemver(parsed[i - 1]!, parsed[i]!), `${ordered[i - 1]} < ${ordered[i]}`).toBeLessThan(0);
    expect(compareSemver(parseSemver('0.2.0+build.5')!, parseSemver('0.2.0')!)).toBe(0);
  });

  it('not semver (v prefix, two parts, leading zero, empty) -> undefined', () => {
    for (const text of ['v0.2.0', '0.2', '01.2.3', '0.2.0-', '']) expect(parseSemver(text), text).toBeUndefined();
  });
});

describe('readRequestVersions', () => {
  const headers = (h: Record<string, string>) => new Headers(h);

  it('no version header -> contract 1, no forwarder version (what 0.1.0 sends)', () => {
    expect(readRequestVersions(headers({}))).toEqual({ versions: { contract: 1 } });
  });

  it('both headers -> the contract as a number and the forwarder version', () => {
    expect(readRequestVersions(headers({ [VersionHeaders.contract]: '2', [VersionHeaders.forwarder]: '0.2.0' }))).toEqual({ versions: { contract: 2, forwarderVersion: '0.2.0' } });
  });

  it('one header without the other, a contract that is no number, a forwarder version that is no semver -> a problem naming the header', () => {
    expect(readRequestVersions(headers({ [VersionHeaders.contract]: '2' }))).toEqual({ problem: expect.stringContaining('come together, or neither does') });
    expect(readRequestVersions(headers({ [VersionHeaders.contract]: 'two', [VersionHeaders.forwarder]: '0.2.0' }))).toEqual({ problem: expect.stringContaining(`${VersionHeaders.contract}: a contract version is a whole number`) });
    expect(readRequestVersions(headers({ [VersionHeaders.contract]: '2', [VersionHeaders.forwarder]: 'latest' }))).toEqual({ problem: expect.stringContaining(`${VersionHeaders.forwarder}: not a semantic version`) });
  });
});

describe('contractVerdict', () => {
  it('contract 1 or 2 -> served; 0 -> upgrade the forwarder; 3 or 99 -> upgrade the backend', () => {
    expect(contractVerdict(1)).toEqual({ served: true });
    expect(contractVerdict(2)).toEqual({ served: true });
    expect(contractVerdict(0)).toEqual({ served: false, upgrade: 'forwarder' });
    expect(contractVerdict(3)).toEqual({ served: false, upgrade: 'backend' });
    expect(contractVerdict(99)).toEqual({ served: false, upgrade: 'backend' });
  });

  it('a backend serving 2 and 3 -> contract 1 is the forwarder to upgrade', () => {
    expect(contractVerdict(1, [2, 3])).toEqual({ served: false, upgrade: 'forwarder' });
  });
});

describe('worksWith: which forwarder works with which backend', () => {
  it("a contract the backend serves -> works; contract 2 with 0.1.0's backend (serves 1, reads no header) -> works, read as contract 1", () => {
    expect(worksWith(1, [1, 2])).toBe(true);
    expect(worksWith(2, [1, 2])).toBe(true);
    expect(worksWith(1, [1])).toBe(true);
    expect(worksWith(2, [1])).toBe(true);
  });

  it('contract 3 with a backend serving 1 and 2, or with 0.1.0\'s; contract 1 with a backend serving 2 and 3 -> does not work', () => {
    expect(worksWith(3, [1, 2])).toBe(false);
    expect(worksWith(3, [1])).toBe(false);
    expect(worksWith(1, [2, 3])).toBe(false);
  });
});

describe('contractRefusal', () => {
  it('contract 99 of forwarder 9.0.0 -> a body naming both contracts, both versions, and the backend as what to upgrade', () => {
    const refusal = contractRefusal({ contract: 99, forwarderVersion: '9.0.0' }, 'backend', [1, 2], '0.2.0');
    expect(ContractRefusalSchema.parse(refusal)).toEqual(refusal);
    expect(refusal.contract).toEqual({ offered: 99, served: [1, 2], upgrade: 'backend', backendVersion: '0.2.0', forwarderVersion: '9.0.0' });
    expect(refusal.error.message).toBe(
      'forwarder 9.0.0 speaks volhook contract 99; the backend (volhook 0.2.0) serves contracts 1 and 2. Upgrade the backend to a release that serves contract 99 (backend first, then forwarders: docs/upgrade.md), or roll the forwarder back to a release that speaks 1 or 2.',
    );
  });

  it('contract 0 -> the forwarder as what to upgrade, to a release speaking a contract served', () => {
    const refusal = contractRefusal({ contract: 0, forwarderVersion: '0.0.1' }, 'forwarder', [1, 2], '0.2.0');
    expect(refusal.error.message).toBe('forwarder 0.0.1 speaks volhook contract 0; the backend (volhook 0.2.0) serves contracts 1 and 2. Upgrade the forwarder to a release that speaks 1 or 2 (docs/upgrade.md).');
  });
});

describe('v1h: the signature over the version headers', () => {
  it('signed with versions -> the version headers, a v1 and a v1h signature; verify with the versions accepts it', () => {
    const headers = sign('{"items":[]}', secret, { id: 'msg_1', now, versions });
    expect(headers).toMatchObject({ [VersionHeaders.contract]: '2', [VersionHeaders.forwarder]: '0.2.0' });
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1h,\S+$/);
    expect(verify(new Headers(headers), '{"items":[]}', [secret], now, { versions })).toEqual({ id: 'msg_1', timestamp: now, fingerprint: secretFingerprint(secret) });
  });

  it("the same request checked as contract 1 (v1 only, what a 0.1.0 backend does) -> also accepted: the v1 signature is still there", () => {
    const headers = sign('{"items":[]}', secret, { id: 'msg_1', now, versions });
    expect(verify(new Headers(headers), '{"items":[]}', [secret], now)).toEqual({ id: 'msg_1', timestamp: now, fingerprint: secretFingerprint(secret) });
  });

  it('a version header changed after signing -> refused; the control, unchanged -> accepted', () => {
    const headers = sign('body', secret, { now, versions });
    expect(() => verify(new Headers(headers), 'body', [secret], now, { versions })).not.toThrow();
    expect(() => verify(new Headers(headers), 'body', [secret], now, { versions: { ...versions, contract: 99 } })).toThrow(/v1h signature does not match the body and version headers/);
    expect(() => verify(new Headers(headers), 'body', [secret], now, { versions: { ...versions, forwarderVersion: '0.1.0' } })).toThrow(SignatureError);
  });

  it('version headers added to a request signed without them (v1 only) -> refused: v1 does not cover them', () => {
    const headers = sign('body', secret, { now });
    expect(() => verify(new Headers(headers), 'body', [secret], now, { versions })).toThrow(/no v1h signature, which the version headers .* need: a v1 signature does not cover them/);
  });

  it('the body changed -> refused as before, with or without versions', () => {
    const headers = sign('body', secret, { now, versions });
    expect(() => verify(new Headers(headers), 'body!', [secret], now, { versions })).toThrow(SignatureError);
    expect(() => verify(new Headers(headers), 'body!', [secret], now)).toThrow(SignatureError);
  });

  it('a contract no header-less backend reads as its own (3) -> v1h alone, so that removing its headers cannot make it a contract-1 request', () => {
    const headers = sign('body', secret, { now, versions: { contract: 3, forwarderVersion: '0.3.0' } });
    expect(headers['webhook-signature']).toMatch(/^v1h,\S+$/);
    expect(() => verify(new Headers(headers), 'body', [secret], now)).toThrow(/no v1 signature/);
  });

  it('signed without versions -> exactly the three Standard Webhooks headers, as 0.1.0 sent them', () => {
    expect(Object.keys(sign('body', secret, { now })).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
  });
});
