/**
 * Which versions work together: volhook's own version (one for backend, forwarder, chart and
 * image, from package.json, which the release script bumps) and the version of the contract
 * between forwarder and backend, with the one rule both sides use to decide whether a backend
 * serves a forwarder (docs/upgrade.md).
 *
 * A backend serves the current contract and the previous one, so that forwarders can be
 * upgraded cluster by cluster after it. Contract 1 is volhook 0.1.0's, whose forwarder sends no
 * version header: a request without one speaks contract 1. Contract 2 adds the headers
 * `x-volhook-contract-version` and `x-volhook-forwarder-version`, covered by the signature
 * (signing.ts: `v1h`), and the refusal below; its body is contract 1's.
 *
 * A contract the backend does not serve is refused with 426 before anything else is looked at
 * (the registry, the signature, the body): a request of an unknown contract cannot be read, nor
 * its signature checked, by the rules of another. The refusal's shape
 * ({@link ContractRefusalSchema}) is fixed for good, so that any forwarder reads any backend's.
 */
import * as z from 'zod/mini';
import pkg from '../../package.json' with { type: 'json' };
import { deferred } from './deferred.js';
import { SemverSchema } from './semver.js';
import './zod-messages.js';

/** This build's version (package.json, carried by the forwarder's bundle and the function's). */
export const VOLHOOK_VERSION: string = pkg.version;

/** The contract this build speaks (forwarder) and serves (backend), with the previous one. */
export const CONTRACT_VERSIONS = { current: 2, previous: 1 } as const;

/** What a request without version headers speaks: volhook 0.1.0's contract. */
export const HEADERLESS_CONTRACT = 1 as const;

/** The contracts a backend of this build serves: the current one and the previous one. */
export const SUPPORTED_CONTRACTS: readonly number[] = [CONTRACT_VERSIONS.previous, CONTRACT_VERSIONS.current];

export const VersionHeaders = {
  contract: 'x-volhook-contract-version',
  forwarder: 'x-volhook-forwarder-version',
} as const;

/** The status of a contract refusal. See docs/upgrade.md for why 426 and not 400. */
export const CONTRACT_REFUSAL_STATUS = 426;
export const CONTRACT_REFUSAL_CODE = 'unsupported_contract';

/** What a forwarder of contract 2 on says of itself, in the version headers, signed. */
export interface ForwarderVersions {
  contract: number;
  forwarderVersion: string;
}

/** The versions of a request: both in headers (contract 2 on), or none, which is contract 1. */
export type RequestVersions = ForwarderVersions | { contract: typeof HEADERLESS_CONTRACT; forwarderVersion?: undefined };

/** The version headers as they arrive: both, or neither. */
export const VersionHeadersSchema = deferred(() => z
  .object({
    contract: z.optional(z.string().check(z.regex(/^(0|[1-9]\d{0,5})$/, 'a contract version is a whole number, e.g. 2'))),
    forwarder: z.optional(SemverSchema),
  })
  .check(
    z.refine((h) => (h.contract === undefined) === (h.forwarder === undefined), {
      message: `${VersionHeaders.contract} and ${VersionHeaders.forwarder} come together, or neither does (contract ${HEADERLESS_CONTRACT})`,
    }),
  ));

/** The versions a request names, or what is wrong with its version headers. */
export function readRequestVersions(headers: { get(name: string): string | null | undefined }): { versions: RequestVersions } | { problem: string } {
  const raw = {
    contract: headers.get(VersionHeaders.contract) ?? undefined,
    forwarder: headers.get(VersionHeaders.forwarder) ?? undefined,
  };
  const parsed = VersionHeadersSchema.safeParse(raw);
  if (!parsed.success) {
    const paths: Record<string, string> = { contract: VersionHeaders.contract, forwarder: VersionHeaders.forwarder };
    const issues = parsed.error.issues.map((issue) => `${issue.path.map((p) => paths[String(p)] ?? String(p)).join('.') || 'version headers'}: ${issue.message}`);
    return { problem: issues.join('; ') };
  }
  const { contract, forwarder } = parsed.data;
  if (contract === undefined || forwarder === undefined) return { versions: { contract: HEADERLESS_CONTRACT } };
  return { versions: { contract: Number(contract), forwarderVersion: forwarder } };
}

/** The headers a forwarder of `forwarderVersion` speaking `contract` sends. */
export function versionHeaders(versions: ForwarderVersions): Record<string, string> {
  return { [VersionHeaders.contract]: String(versions.contract), [VersionHeaders.forwarder]: versions.forwarderVersion };
}

/**
 * Contracts a backend of the header-less contract (0.1.0, which reads no version header) reads
 * as contract 1: contract 2, whose body is contract 1's and which is signed by `v1` as well as
 * `v1h` (signing.ts sends `v1` for these contracts only, so that a later contract, whose body
 * differs, cannot be stripped of its headers and read as contract 1).
 */
export const READ_AS_HEADERLESS: readonly number[] = [2];

/**
 * Whether a forwarder speaking `speaks` works with a backend serving `serves`: the rule of
 * docs/upgrade.md's table and of the skew test. A backend that serves it does; so does a
 * header-less backend for a contract it reads as its own. Any other pair is refused by a backend
 * that checks versions (426), and would be misread by one that does not.
 */
export function worksWith(speaks: number, serves: readonly number[]): boolean {
  if (serves.includes(speaks)) return true;
  const headerless = serves.length > 0 && serves.every((c) => c === HEADERLESS_CONTRACT);
  return headerless && READ_AS_HEADERLESS.includes(speaks);
}

/** Which side a refused pair must move: the one whose contract is outside the other's. */
export type UpgradeSide = 'forwarder' | 'backend';

export type ContractVerdict = { served: true } | { served: false; upgrade: UpgradeSide };

/**
 * Whether a backend serving `served` serves a forwarder speaking `offered`, and if not, which
 * side to upgrade: a forwarder older than everything served is upgraded; a forwarder newer than
 * the backend needs the backend upgraded (or itself rolled back).
 */
export function contractVerdict(offered: number, served: readonly number[] = SUPPORTED_CONTRACTS): ContractVerdict {
  if (served.includes(offered)) return { served: true };
  return { served: false, upgrade: offered > Math.max(...served) ? 'backend' : 'forwarder' };
}

/** The body of a 426: every forwarder, of whatever contract, can read it. */
export const ContractRefusalSchema = deferred(() => z.object({
  error: z.object({ code: z.literal(CONTRACT_REFUSAL_CODE), message: z.string() }),
  contract: z.object({
    /** The contract the forwarder spoke. */
    offered: z.int(),
    /** The contracts the backend serves. */
    served: z.array(z.int()),
    upgrade: z.enum(['forwarder', 'backend']),
    backendVersion: z.string(),
    forwarderVersion: z.optional(z.string()),
  }),
}));
export type ContractRefusal = z.infer<typeof ContractRefusalSchema>;

/** The refusal a backend of `backendVersion` serving `served` answers `versions` with. */
export function contractRefusal(
  versions: RequestVersions,
  upgrade: UpgradeSide,
  served: readonly number[] = SUPPORTED_CONTRACTS,
  backendVersion: string = VOLHOOK_VERSION,
): ContractRefusal {
  const contract = {
    offered: versions.contract,
    served: [...served],
    upgrade,
    backendVersion,
    ...(versions.forwarderVersion !== undefined && { forwarderVersion: versions.forwarderVersion }),
  };
  return { error: { code: CONTRACT_REFUSAL_CODE, message: refusalMessage(contract) }, contract };
}

/** What to tell the operator: both contracts, both versions, and what to upgrade. */
export function refusalMessage(contract: ContractRefusal['contract']): string {
  const forwarder = contract.forwarderVersion ? `forwarder ${contract.forwarderVersion}` : 'the forwarder';
  const served = listed(contract.served);
  const said = `${forwarder} speaks volhook contract ${contract.offered}; the backend (volhook ${contract.backendVersion}) serves contract${contract.served.length === 1 ? '' : 's'} ${served}.`;
  const fix =
    contract.upgrade === 'backend'
      ? ` Upgrade the backend to a release that serves contract ${contract.offered} (backend first, then forwarders: docs/upgrade.md), or roll the forwarder back to a release that speaks ${listed(contract.served, 'or')}.`
      : ` Upgrade the forwarder to a release that speaks ${listed(contract.served, 'or')} (docs/upgrade.md).`;
  return said + fix;
}

function listed(values: readonly number[], last: 'and' | 'or' = 'and'): string {
  if (values.length <= 1) return values.join('');
  return `${values.slice(0, -1).join(', ')} ${last} ${values.at(-1)}`;
}
