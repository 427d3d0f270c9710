/**
 * Reports as files in one directory — `<clusterId>.report.json` and `<clusterId>.events.json`,
 * while a report sent in parts is coming in `<clusterId>.part.<digest>.<index>.json`, and the
 * audit's marks and the retained resources as one file per resource ID in the directories
 * `<clusterId>.marks/` (holding the mark's time) and `<clusterId>.retained/`, and the latest refused
 * request in `<clusterId>.refused.json`, and when a request was last verified with each secret in
 * `<clusterId>.verified.json` (fingerprint → time) — so that the local stack's backend writes them and `npm run cluster -- audit` in another
 * process reads them. Each file is replaced whole by rename, so a reader never sees half of
 * one; the report and the Events live apart, so the two writers (the backend, the CLI) never
 * overwrite each other's file, and a mark or a retained resource is a file of its own, made or
 * removed whole, so that the backend (retaining) and an audit (releasing) never undo each
 * other's change.
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assembleReport } from '../contract/index.js';
import { ClusterIdSchema } from '../registry/registration.js';
import {
  checkResourceIds,
  partsMissing,
  PendingEventsSchema,
  RESOURCE_ID,
  StoredReportPartSchema,
  StoredReportSchema,
  type ReportStore,
  type StoredReport,
  type StoredReportPart,
} from './store.js';
import { recordsRefusal, RefusalSchema, type Refusal } from './refusals.js';
import { checkFingerprint, recordsVerification, VerifiedBySchema, type VerifiedBy } from './verified-by.js';

const REPORT = '.report.json';
const EVENTS = '.events.json';
const MARKS = '.marks';
const RETAINED = '.retained';
const REFUSED = '.refused.json';
const VERIFIED = '.verified.json';
const DIGEST = /^[0-9a-f]{64}$/;
/** A file in a directory of marks or retained resources: a resource ID (never a temporary file, which starts with a dot). */
const RESOURCE_FILE = RESOURCE_ID;

export function createFileReportStore(dir: string): ReportStore {
  const path = (clusterId: string, suffix: string) => {
    // The id becomes a file name: only what a cluster id may be.
    ClusterIdSchema.parse(clusterId);
    return join(dir, `${clusterId}${suffix}`);
  };
  async function readJson(file: string): Promise<unknown | undefined> {
    try {
      return JSON.parse(await readFile(file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
  async function writeJson(file: string, value: unknown): Promise<void> {
    await mkdir(dir, { recursive: true });
    const tmp = `${file}.${randomUUID()}.tmp`;
    await writeFile(tmp, JSON.stringify(value));
    await rename(tmp, file);
  }
  // One writer per process at a time, so a read-modify-write is not interleaved within it.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work, work);
    chain = next.catch(() => undefined);
    return next;
  };
  const partPrefix = (clusterId: string, digest?: string) => {
    ClusterIdSchema.parse(clusterId);
    if (digest !== undefined && !DIGEST.test(digest)) throw new Error(`not a report digest: "${digest.slice(0, 80)}"`);
    return `${clusterId}.part.${digest ?? ''}`;
  };
  const partFile = (clusterId: string, digest: string, index: number) => join(dir, `${partPrefix(clusterId, digest)}.${index}.json`);
  async function names(): Promise<string[]> {
    try {
      return await readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
  async function readPart(clusterId: string, digest: string, index: number): Promise<StoredReportPart | undefined> {
    const raw = await readJson(partFile(clusterId, digest, index));
    return raw === undefined ? undefined : StoredReportPartSchema.parse(raw);
  }
  /** The file names in one cluster's directory of marks or retained resources: resource IDs. */
  async function idsIn(clusterId: string, suffix: string): Promise<string[]> {
    try {
      return (await readdir(path(clusterId, suffix))).filter((n) => RESOURCE_FILE.test(n));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
  /** Makes `<dir>/<id>` holding `text` unless it exists: written aside, then linked, so it is never seen half written. */
  async function create(dirOf: string, id: string, text: string): Promise<void> {
    await mkdir(dirOf, { recursive: true });
    const tmp = join(dirOf, `.${id}.${randomUUID()}.tmp`);
    await writeFile(tmp, text);
    try {
      await link(tmp, join(dirOf, id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await rm(tmp, { force: true });
    }
  }
  const removeAll = async (clusterId: string, suffix: string, ids: readonly string[]) => {
    await Promise.all(ids.filter((id) => RESOURCE_FILE.test(id)).map((id) => rm(join(path(clusterId, suffix), id), { force: true })));
  };
  const lastRefusal = async (clusterId: string): Promise<Refusal | undefined> => {
    const raw = await readJson(path(clusterId, REFUSED));
    return raw === undefined ? undefined : RefusalSchema.parse(raw);
  };
  const verifiedBy = async (clusterId: string): Promise<VerifiedBy> => {
    const raw = await readJson(path(clusterId, VERIFIED));
    return raw === undefined ? {} : VerifiedBySchema.parse(raw);
  };
  const get = async (clusterId: string): Promise<StoredReport | undefined> => {
    const raw = await readJson(path(clusterId, REPORT));
    return raw === undefined ? undefined : StoredReportSchema.parse(raw);
  };

  return {
    get,
    put: (report) =>
      serial(async () => {
        const current = await get(report.clusterId);
        if (current && current.observedAt > report.observedAt) return false;
        await writeJson(path(report.clusterId, REPORT), report);
        return true;
      }),
    confirm: (clusterId, digest, observedAt, receivedAt) =>
      serial(async () => {
        const current = await get(clusterId);
        if (current?.digest !== digest) return false;
        if (observedAt >= current.observedAt) await writeJson(path(clusterId, REPORT), { ...current, observedAt, ...(receivedAt !== undefined && { receivedAt }) });
        return true;
      }),
    putPart: (part) =>
      serial(async () => {
        const kept = await readPart(part.clusterId, part.digest, part.index);
        await writeJson(partFile(part.clusterId, part.digest, part.index), { ...part, receivedAt: Math.min(part.receivedAt, kept?.receivedAt ?? Infinity) });
        const prefix = `${partPrefix(part.clusterId, part.digest)}.`;
        return (await names()).filter((n) => n.startsWith(prefix) && n.endsWith('.json')).length;
      }),
    async parts(clusterId, digest, count) {
      const parts = await Promise.all(Array.from({ length: count }, (_, i) => readPart(clusterId, digest, i)));
      return parts.map((p) => (p?.count === count ? p : undefined));
    },
    complete: (clusterId, digest, count, observedAt, receivedAt) =>
      serial(async () => {
        const parts = await Promise.all(Array.from({ length: count }, (_, i) => readPart(clusterId, digest, i)));
        // Completed a moment ago by a request that carried the same last part.
        if (parts.some((p) => !p) && (await get(clusterId))?.digest === digest) return true;
        if (parts.some((p) => !p)) throw partsMissing(clusterId, digest);
        // Every report in parts of the cluster goes: another one still coming is sent again by its forwarder.
        const prefix = partPrefix(clusterId);
        await Promise.all((await names()).filter((n) => n.startsWith(prefix)).map((n) => rm(join(dir, n), { force: true })));
        const current = await get(clusterId);
        if (current && current.observedAt > observedAt) return false;
        const report = assembleReport(parts.map((p) => (p as StoredReportPart).report));
        await writeJson(path(clusterId, REPORT), { clusterId, digest, observedAt, receivedAt, report });
        return true;
      }),
    queueEvents: (clusterId, events) =>
      serial(async () => {
        const file = path(clusterId, EVENTS);
        const queued = PendingEventsSchema.parse((await readJson(file)) ?? []);
        await writeJson(file, [...queued, ...events]);
      }),
    takeEvents: (clusterId) =>
      serial(async () => {
        const file = path(clusterId, EVENTS);
        const queued = PendingEventsSchema.parse((await readJson(file)) ?? []);
        await rm(file, { force: true });
        return queued;
      }),
    async clusters() {
      return (await names()).filter((n) => n.endsWith(REPORT)).map((n) => n.slice(0, -REPORT.length)).sort();
    },
    async marks(clusterId) {
      const ids = await idsIn(clusterId, MARKS);
      const times = await Promise.all(ids.map((id) => readFile(join(path(clusterId, MARKS), id), 'utf8').catch(() => undefined)));
      // A mark removed while read is no mark; one whose file is not a time is refused, never read as 0.
      return new Map(
        ids.flatMap((id, n) => {
          const text = times[n];
          if (text === undefined) return [];
          const at = Number(text);
          if (!Number.isFinite(at) || text.trim() === '') throw new Error(`the mark ${join(path(clusterId, MARKS), id)} does not hold a time: "${text.slice(0, 40)}"`);
          return [[id, at] as const];
        }),
      );
    },
    async mark(clusterId, marked) {
      checkResourceIds(marked.keys());
      await Promise.all([...marked].map(([id, at]) => create(path(clusterId, MARKS), id, String(at))));
    },
    unmark: (clusterId, ids) => removeAll(clusterId, MARKS, ids),
    async retained(clusterId) {
      return new Set(await idsIn(clusterId, RETAINED));
    },
    async retain(clusterId, ids) {
      checkResourceIds(ids);
      await Promise.all(ids.map((id) => create(path(clusterId, RETAINED), id, '')));
    },
    release: (clusterId, ids) => removeAll(clusterId, RETAINED, ids),
    refused: (clusterId, refusal) =>
      serial(async () => {
        if ((await readJson(path(clusterId, REPORT))) === undefined) return;
        if (recordsRefusal(await lastRefusal(clusterId), refusal.at)) await writeJson(path(clusterId, REFUSED), refusal);
      }),
    lastRefusal,
    verifiedWith: (clusterId, fingerprint, at) =>
      serial(async () => {
        checkFingerprint(fingerprint);
        const held = await verifiedBy(clusterId);
        if (recordsVerification(held[fingerprint], at)) await writeJson(path(clusterId, VERIFIED), { ...held, [fingerprint]: at });
      }),
    verifiedBy,
  };
}
