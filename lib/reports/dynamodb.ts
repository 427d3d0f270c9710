/**
 * Reports in a DynamoDB table shared by every Lambda container: partition key `pk`. The
 * cluster's item (`pk` the cluster id) is small: `digest`, `observedAt` (epoch ms),
 * `receivedAt`, `events` (queued Warning Events, JSON strings) and the records below — what
 * every request of the cluster writes, each write billed by the size of the item it writes.
 * The report itself is an item of its own, `<clusterId>#whole#<digest>` with `wholeBody` (the
 * report as gzip'd JSON: a PV entry is ~150 bytes of JSON and compresses well, and an item may
 * hold 400 KB), named by the cluster's item's `whole` (true). A report is kept by one
 * transaction that writes both, conditional on the cluster's `observedAt`, so a late request
 * never replaces a newer report and the cluster's item never names a report not written; the
 * report it replaced is deleted after, by a transaction that deletes it only while the
 * cluster's item does not name it (another request may have kept the same report again). A
 * cluster's item from before this layout holds its report in `body`; it is read as before, and
 * the next report kept takes it off.
 *
 * A report sent in parts (lib/contract/report.ts) is kept one item per part,
 * `<clusterId>#part#<digest>#<index>` with `partBody` (gzip'd JSON of the part), and one
 * item `<clusterId>#parts#<digest>` counting the parts in (`held`, a number set). Once all
 * are in, the cluster's item takes `parts` (their count) in place of `whole`: the report is
 * the parts of its digest, which never change (a digest is its content). The parts of the
 * report it replaced are deleted then.
 *
 * Parts and their count carry `expiresAt` (epoch seconds, the table's TTL attribute) while
 * their report is coming in: the parts of a report never completed (a forwarder that stopped
 * mid-way, a report that changed while sent) go with DynamoDB's TTL a day later. Completing a
 * report takes `expiresAt` off its parts first; a part already held without it (one of a
 * completed report, sent again) is not written again, so it never gets one back.
 *
 * The audit's marks are the item `<clusterId>#marks`, one attribute per marked resource (its
 * ID → the mark's time), each set with `if_not_exists` (an earlier mark stays) or removed on
 * its own; the retained resources are the string set `ids` of the item `<clusterId>#retained`,
 * added to and deleted from element by element (`ADD`, `DELETE`), so that the backend retaining
 * and an audit releasing never undo each other's change.
 *
 * The latest refused request of a cluster is three attributes of the cluster's item,
 * `refusedAt` (epoch ms), `refusedStatus`, `refusedCode`, set by one conditional UpdateItem
 * only while the item holds a report and `refusedAt` is older by REFUSAL_RECORD_INTERVAL_MS (a
 * refusal for an id without a report writes nothing). The store also skips the UpdateItem
 * itself within the interval of a refusal it wrote or was told is held (a refused UpdateItem
 * answers the item), so a flood of refused requests costs one write per cluster a minute, and
 * at most one UpdateItem tried per cluster and Lambda container a minute.
 *
 * When a request of the cluster was last verified with each secret is the map attribute
 * `verifiedBy` of the cluster's item (fingerprint → epoch ms), one entry set by one conditional
 * UpdateItem (`SET verifiedBy.#f = :t`) only while the held time is older by
 * VERIFIED_RECORD_INTERVAL_MS; the store skips the UpdateItem within the interval of a time it
 * wrote or was told is held, as for refusals. The first entry of an item makes the map (a second
 * UpdateItem, conditional on there being none).
 *
 * A confirmation (the digest alone) answers the cluster's item (`ReturnValues`), so the store
 * knows whether Events are queued: when none were, taking them right after writes nothing (a
 * conditional write that fails is billed too). Events queued in between go with the next report.
 *
 * The DynamoDB client is loaded on first use, not at import (lib/dynamodb).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDb } from '../dynamodb/index.js';
import { assembleReport, VolumeReportSchema, WriteSchema, type VolumeReport } from '../contract/index.js';
import { recordsRefusalAt, REFUSAL_RECORD_INTERVAL_MS, type Refusal } from './refusals.js';
import { checkFingerprint, VERIFIED_RECORD_INTERVAL_MS, VerifiedBySchema } from './verified-by.js';
import { checkResourceIds, partsMissing, type ReportStore, type StoredReport, type StoredReportPart } from './store.js';

/** What one item may hold of report, leaving room for the rest of the item under DynamoDB's 400 KB. */
export const MAX_REPORT_BYTES = 350 * 1024;

/** A report too large for the store even compressed; the message says how large. */
export class ReportTooLargeError extends Error {
  override readonly name = 'ReportTooLargeError';
}

/** How long the parts of a report stay while it is coming in. */
export const PART_TTL_SECONDS = 24 * 60 * 60;

/** Marks set or removed by one UpdateItem: its expression stays well under DynamoDB's 4 KB. */
const MARKS_PER_UPDATE = 50;

/** How long a confirmation's finding of no queued Events spares the `takeEvents` after it. */
const NO_EVENTS_VALID_MS = 5_000;

/** Clusters whose last recorded refusal one store remembers, to skip writes; past this many it forgets them all (a write too many, never one too few). */
const REMEMBERED_REFUSALS = 10_000;

export interface DynamoDbReportStoreOptions {
  tableName: string;
  client?: DynamoDBClient;
  /** Epoch ms; the clock the parts' expiry is set from (tests). */
  now?: () => number;
}

export function createDynamoDbReportStore(options: DynamoDbReportStoreOptions): ReportStore {
  const TableName = options.tableName;
  const sdk = () => dynamoDb(options.client);
  const key = (clusterId: string) => ({ pk: { S: clusterId } });
  const now = options.now ?? Date.now;
  const partExpiry = () => ({ N: String(Math.floor(now() / 1000) + PART_TTL_SECONDS) });
  /** Per cluster, the latest refusal time this store wrote or found held: the table's is never earlier. */
  const refusalsWritten = new Map<string, number>();
  const remember = (clusterId: string, at: number) => {
    if (refusalsWritten.size >= REMEMBERED_REFUSALS) refusalsWritten.clear();
    refusalsWritten.set(clusterId, Math.max(at, refusalsWritten.get(clusterId) ?? -Infinity));
  };

  /**
   * Per cluster, when a confirmation of this store found no Events queued: the `takeEvents`
   * right after it (within NO_EVENTS_VALID_MS) writes nothing.
   */
  const noEventsSeen = new Map<string, number>();
  const rememberNoEvents = (clusterId: string) => {
    if (noEventsSeen.size >= REMEMBERED_REFUSALS) noEventsSeen.clear();
    noEventsSeen.set(clusterId, now());
  };
  const noEventsJustNow = (clusterId: string): boolean => {
    const seen = noEventsSeen.get(clusterId);
    noEventsSeen.delete(clusterId);
    return seen !== undefined && now() - seen <= NO_EVENTS_VALID_MS;
  };

  /** Per cluster and fingerprint, the latest verification time this store wrote or found held. */
  const verifiedWritten = new Map<string, number>();
  const rememberVerified = (memo: string, at: number) => {
    if (verifiedWritten.size >= REMEMBERED_REFUSALS) verifiedWritten.clear();
    verifiedWritten.set(memo, Math.max(at, verifiedWritten.get(memo) ?? -Infinity));
  };

  async function read(clusterId: string): Promise<Record<string, AttributeValue> | undefined> {
    const {
      sdk: { GetItemCommand },
      client,
    } = await sdk();
    const out = await client.send(new GetItemCommand({ TableName, Key: key(clusterId), ConsistentRead: true }));
    return out.Item;
  }
  const partKey = (clusterId: string, digest: string, index: number) => ({ pk: { S: `${clusterId}#part#${digest}#${index}` } });
  const heldKey = (clusterId: string, digest: string) => ({ pk: { S: `${clusterId}#parts#${digest}` } });
  const gzipped = (report: VolumeReport, what: string) => {
    const body = gzipSync(JSON.stringify(report));
    if (body.length > MAX_REPORT_BYTES) throw new ReportTooLargeError(`${what} is ${body.length} bytes compressed; the store holds at most ${MAX_REPORT_BYTES} in one item`);
    return body;
  };
  const unzipped = (body: Uint8Array): VolumeReport => VolumeReportSchema.parse(JSON.parse(gunzipSync(body).toString('utf8')));

  async function readPart(clusterId: string, digest: string, index: number): Promise<StoredReportPart | undefined> {
    const {
      sdk: { GetItemCommand },
      client,
    } = await sdk();
    const { Item } = await client.send(new GetItemCommand({ TableName, Key: partKey(clusterId, digest, index), ConsistentRead: true }));
    if (!Item?.partBody?.B || Item.digest?.S !== digest || !Item.count?.N || !Item.observedAt?.N) return undefined;
    return {
      clusterId,
      digest,
      index,
      count: Number(Item.count.N),
      observedAt: Number(Item.observedAt.N),
      receivedAt: Number(Item.receivedAt?.N ?? 0),
      report: unzipped(Item.partBody.B),
    };
  }
  const readParts = (clusterId: string, digest: string, count: number) =>
    Promise.all(Array.from({ length: count }, (_, i) => readPart(clusterId, digest, i).then((p) => (p?.count === count ? p : undefined))));

  async function deleteParts(clusterId: string, digest: string, count: number): Promise<void> {
    const {
      sdk: { DeleteItemCommand },
      client,
    } = await sdk();
    const keys = [heldKey(clusterId, digest), ...Array.from({ length: count }, (_, i) => partKey(clusterId, digest, i))];
    await Promise.all(keys.map((Key) => client.send(new DeleteItemCommand({ TableName, Key }))));
  }

  /**
   * The parts of `digest` kept for good (their `expiresAt` removed), each only if it is still
   * there. False when one is not (it expired, or went with a report that replaced it).
   */
  async function keepParts(clusterId: string, digest: string, count: number): Promise<boolean> {
    const {
      sdk: { UpdateItemCommand },
      client,
    } = await sdk();
    const kept = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        client
          .send(
            new UpdateItemCommand({
              TableName,
              Key: partKey(clusterId, digest, i),
              UpdateExpression: 'REMOVE expiresAt',
              ConditionExpression: 'attribute_exists(partBody) AND digest = :d',
              ExpressionAttributeValues: { ':d': { S: digest } },
            }),
          )
          .then(
            () => true,
            (err: unknown) => {
              if (isConditionFailed(err)) return false;
              throw err;
            },
          ),
      ),
    );
    return kept.every(Boolean);
  }

  /** The cluster's item names the report in `parts` parts (unless a later report is kept): the report it named before goes. */
  async function replaceWithParts(clusterId: string, digest: string, at: { observedAt: number; receivedAt: number }, parts: number): Promise<boolean> {
    const {
      sdk: { UpdateItemCommand },
      client,
    } = await sdk();
    let old: Record<string, AttributeValue> | undefined;
    try {
      ({ Attributes: old } = await client.send(
        new UpdateItemCommand({
          TableName,
          Key: key(clusterId),
          UpdateExpression: 'SET digest = :d, observedAt = :t, receivedAt = :r, parts = :n REMOVE body, whole',
          ConditionExpression: 'attribute_not_exists(observedAt) OR observedAt <= :t',
          ExpressionAttributeValues: { ':d': { S: digest }, ':t': { N: String(at.observedAt) }, ':r': { N: String(at.receivedAt) }, ':n': { N: String(parts) } },
          ReturnValues: 'UPDATED_OLD',
        }),
      ));
    } catch (err) {
      if (isConditionFailed(err)) return false;
      throw err;
    }
    await dropReplaced(clusterId, old, { digest, whole: false });
    return true;
  }

  /**
   * The report `digest` written whole, and the cluster's item naming it, in one transaction
   * (unless a later report is kept): the report the item named before goes. The item is read
   * first for that; should another request replace it in between, the report it named is left
   * in the table (a leak, never a report the item names deleted).
   */
  async function replaceWhole(stored: StoredReport, body: Uint8Array): Promise<boolean> {
    const {
      sdk: { GetItemCommand, TransactWriteItemsCommand },
      client,
    } = await sdk();
    const { clusterId, digest } = stored;
    const { Item: old } = await client.send(new GetItemCommand({ TableName, Key: key(clusterId), ConsistentRead: true, ProjectionExpression: 'digest, parts, whole' }));
    try {
      await client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Update: {
                TableName,
                Key: key(clusterId),
                UpdateExpression: 'SET digest = :d, observedAt = :t, receivedAt = :r, whole = :w REMOVE body, parts',
                ConditionExpression: 'attribute_not_exists(observedAt) OR observedAt <= :t',
                ExpressionAttributeValues: { ':d': { S: digest }, ':t': { N: String(stored.observedAt) }, ':r': { N: String(stored.receivedAt) }, ':w': { BOOL: true } },
              },
            },
            { Put: { TableName, Item: { ...wholeKey(clusterId, digest), digest: { S: digest }, wholeBody: { B: body } } } },
          ],
        }),
      );
    } catch (err) {
      if (isTransactionConditionFailed(err)) return false;
      throw err;
    }
    await dropReplaced(clusterId, old, { digest, whole: true });
    return true;
  }

  /** What the cluster's item named before (`old`) and names no more (`now`) deleted: a whole report only while the item does not name it again. */
  async function dropReplaced(clusterId: string, old: Record<string, AttributeValue> | undefined, now: { digest: string; whole: boolean }): Promise<void> {
    const oldDigest = old?.digest?.S;
    if (!oldDigest) return;
    const oldParts = old?.parts?.N;
    if (oldParts && oldDigest !== now.digest) await deleteParts(clusterId, oldDigest, Number(oldParts));
    if (old?.whole?.BOOL && (oldDigest !== now.digest || !now.whole)) await deleteWhole(clusterId, oldDigest);
  }

  async function deleteWhole(clusterId: string, digest: string): Promise<void> {
    const {
      sdk: { TransactWriteItemsCommand },
      client,
    } = await sdk();
    try {
      await client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { ConditionCheck: { TableName, Key: key(clusterId), ConditionExpression: 'NOT (digest = :d AND attribute_exists(whole))', ExpressionAttributeValues: { ':d': { S: digest } } } },
            { Delete: { TableName, Key: wholeKey(clusterId, digest) } },
          ],
        }),
      );
    } catch (err) {
      // Named again meanwhile (the same report kept by another request): it stays.
      if (!isTransactionConditionFailed(err)) throw err;
    }
  }

  async function toStored(clusterId: string, item: Record<string, AttributeValue> | undefined): Promise<StoredReport | 'parts missing' | undefined> {
    if (!item?.digest?.S || !item.observedAt?.N) return undefined;
    const digest = item.digest.S;
    const observedAt = Number(item.observedAt.N);
    const receivedAt = Number(item.receivedAt?.N ?? 0);
    if (item.whole?.BOOL) {
      const {
        sdk: { GetItemCommand },
        client,
      } = await sdk();
      const { Item: whole } = await client.send(new GetItemCommand({ TableName, Key: wholeKey(clusterId, digest), ConsistentRead: true }));
      if (!whole?.wholeBody?.B || whole.digest?.S !== digest) return 'parts missing';
      return { clusterId, digest, observedAt, receivedAt, report: unzipped(whole.wholeBody.B) };
    }
    // A cluster's item from before the report had an item of its own.
    if (item.body?.B) return { clusterId, digest, observedAt, receivedAt, report: unzipped(item.body.B) };
    if (!item.parts?.N) return undefined;
    const parts = await readParts(clusterId, digest, Number(item.parts.N));
    if (parts.some((p) => !p)) return 'parts missing';
    return { clusterId, digest, observedAt, receivedAt, report: assembleReport(parts.map((p) => (p as StoredReportPart).report)) };
  }

  return {
    async get(clusterId) {
      // A report replaced while read has its parts deleted under the reader: read the new one.
      for (let attempt = 1; ; attempt += 1) {
        const stored = await toStored(clusterId, await read(clusterId));
        if (stored !== 'parts missing') return stored;
        if (attempt === 3) throw new Error(`the volume report of cluster "${clusterId}" names parts that are not in the table`);
      }
    },
    async put(stored) {
      return replaceWhole(stored, gzipped(stored.report, `the volume report of cluster "${stored.clusterId}"`));
    },
    async putPart(part) {
      const body = gzipped(part.report, `part ${part.index} of ${part.count} of the volume report of cluster "${part.clusterId}"`);
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      const expiresAt = partExpiry();
      try {
        await client.send(
          new UpdateItemCommand({
            TableName,
            Key: partKey(part.clusterId, part.digest, part.index),
            // A part sent again keeps the time it was first received at.
            UpdateExpression: 'SET digest = :d, #i = :i, #c = :c, observedAt = :t, receivedAt = if_not_exists(receivedAt, :r), partBody = :b, expiresAt = :e',
            // Not over a part of a completed report (held for good: no expiresAt). Its content is
            // this one's (the same digest and index), and rewritten it would expire under the report.
            ConditionExpression: 'attribute_not_exists(partBody) OR attribute_exists(expiresAt)',
            ExpressionAttributeNames: { '#i': 'index', '#c': 'count' },
            ExpressionAttributeValues: {
              ':d': { S: part.digest },
              ':i': { N: String(part.index) },
              ':c': { N: String(part.count) },
              ':t': { N: String(part.observedAt) },
              ':r': { N: String(part.receivedAt) },
              ':b': { B: body },
              ':e': expiresAt,
            },
          }),
        );
      } catch (err) {
        if (!isConditionFailed(err)) throw err;
      }
      const out = await client.send(
        new UpdateItemCommand({
          TableName,
          Key: heldKey(part.clusterId, part.digest),
          UpdateExpression: 'ADD held :i SET expiresAt = :e',
          ExpressionAttributeValues: { ':i': { NS: [String(part.index)] }, ':e': expiresAt },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return out.Attributes?.held?.NS?.length ?? 0;
    },
    parts: readParts,
    async complete(clusterId, digest, count, observedAt, receivedAt) {
      if (!(await keepParts(clusterId, digest, count))) {
        // Parts gone: expired, or deleted with a report of this digest that has been replaced since.
        // What is left of them can never complete (its forwarder sends them again), unless they are the cluster's report.
        if ((await read(clusterId))?.digest?.S !== digest) await deleteParts(clusterId, digest, count);
        throw partsMissing(clusterId, digest);
      }
      const kept = await replaceWithParts(clusterId, digest, { observedAt, receivedAt }, count);
      if (!kept) await deleteParts(clusterId, digest, count);
      else {
        const {
          sdk: { DeleteItemCommand },
          client,
        } = await sdk();
        await client.send(new DeleteItemCommand({ TableName, Key: heldKey(clusterId, digest) }));
      }
      return kept;
    },
    async confirm(clusterId, digest, observedAt, receivedAt) {
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      try {
        const out = await client.send(
          new UpdateItemCommand({
            TableName,
            Key: key(clusterId),
            UpdateExpression: receivedAt === undefined ? 'SET observedAt = :t' : 'SET observedAt = :t, receivedAt = :r',
            ConditionExpression: 'digest = :d AND observedAt <= :t',
            ExpressionAttributeValues: {
              ':d': { S: digest },
              ':t': { N: String(observedAt) },
              ...(receivedAt !== undefined && { ':r': { N: String(receivedAt) } }),
            },
            // The cluster's item is small: answered whole, it says whether Events are queued.
            ReturnValues: 'ALL_NEW',
          }),
        );
        if (out.Attributes && !out.Attributes.events) rememberNoEvents(clusterId);
        return true;
      } catch (err) {
        if (!isConditionFailed(err)) throw err;
        // Either another digest, or a later confirmation got there first.
        return (await read(clusterId))?.digest?.S === digest;
      }
    },
    async queueEvents(clusterId, events) {
      if (events.length === 0) return;
      noEventsSeen.delete(clusterId);
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      await client.send(
        new UpdateItemCommand({
          TableName,
          Key: key(clusterId),
          UpdateExpression: 'SET events = list_append(if_not_exists(events, :none), :new)',
          ExpressionAttributeValues: { ':none': { L: [] }, ':new': { L: events.map((e) => ({ S: JSON.stringify(e) })) } },
        }),
      );
    },
    async takeEvents(clusterId) {
      if (noEventsJustNow(clusterId)) return [];
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      try {
        const out = await client.send(
          new UpdateItemCommand({
            TableName,
            Key: key(clusterId),
            UpdateExpression: 'REMOVE events',
            ConditionExpression: 'attribute_exists(events)',
            ReturnValues: 'UPDATED_OLD',
          }),
        );
        return (out.Attributes?.events?.L ?? []).map((v) => WriteSchema.parse(JSON.parse(v.S ?? 'null')));
      } catch (err) {
        if (isConditionFailed(err)) return [];
        throw err;
      }
    },
    async clusters() {
      const {
        sdk: { ScanCommand },
        client,
      } = await sdk();
      const ids: string[] = [];
      let ExclusiveStartKey: Record<string, AttributeValue> | undefined;
      do {
        const out = await client.send(
          new ScanCommand({ TableName, ProjectionExpression: 'pk', FilterExpression: 'attribute_exists(whole) OR attribute_exists(body) OR attribute_exists(parts)', ExclusiveStartKey }),
        );
        for (const item of out.Items ?? []) if (item.pk?.S) ids.push(item.pk.S);
        ExclusiveStartKey = out.LastEvaluatedKey;
      } while (ExclusiveStartKey);
      return ids.sort();
    },
    async marks(clusterId) {
      const {
        sdk: { GetItemCommand },
        client,
      } = await sdk();
      const { Item } = await client.send(new GetItemCommand({ TableName, Key: marksKey(clusterId), ConsistentRead: true }));
      return new Map(Object.entries(Item ?? {}).flatMap(([id, value]) => (id !== 'pk' && value.N !== undefined ? [[id, Number(value.N)] as const] : [])));
    },
    async mark(clusterId, marked) {
      checkResourceIds(marked.keys());
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      for (const chunk of chunks([...marked], MARKS_PER_UPDATE)) {
        await client.send(
          new UpdateItemCommand({
            TableName,
            Key: marksKey(clusterId),
            UpdateExpression: `SET ${chunk.map((_, i) => `#m${i} = if_not_exists(#m${i}, :t${i})`).join(', ')}`,
            ExpressionAttributeNames: Object.fromEntries(chunk.map(([id], i) => [`#m${i}`, id])),
            ExpressionAttributeValues: Object.fromEntries(chunk.map(([, at], i) => [`:t${i}`, { N: String(at) }])),
          }),
        );
      }
    },
    async unmark(clusterId, ids) {
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      for (const chunk of chunks([...new Set(ids)], MARKS_PER_UPDATE)) {
        await client.send(
          new UpdateItemCommand({
            TableName,
            Key: marksKey(clusterId),
            UpdateExpression: `REMOVE ${chunk.map((_, i) => `#m${i}`).join(', ')}`,
            ExpressionAttributeNames: Object.fromEntries(chunk.map((id, i) => [`#m${i}`, id])),
          }),
        );
      }
    },
    async retained(clusterId) {
      const {
        sdk: { GetItemCommand },
        client,
      } = await sdk();
      const { Item } = await client.send(new GetItemCommand({ TableName, Key: retainedKey(clusterId), ConsistentRead: true }));
      return new Set(Item?.ids?.SS ?? []);
    },
    async retain(clusterId, ids) {
      checkResourceIds(ids);
      await changeRetained(clusterId, 'ADD', ids);
    },
    async release(clusterId, ids) {
      await changeRetained(clusterId, 'DELETE', ids);
    },
    async refused(clusterId, refusal) {
      if (!recordsRefusalAt(refusalsWritten.get(clusterId), refusal.at)) return;
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      try {
        await client.send(
          new UpdateItemCommand({
            TableName,
            Key: key(clusterId),
            UpdateExpression: 'SET refusedAt = :t, refusedStatus = :s, refusedCode = :c',
            ConditionExpression: 'attribute_exists(digest) AND (attribute_not_exists(refusedAt) OR refusedAt <= :cutoff)',
            ExpressionAttributeValues: {
              ':t': { N: String(refusal.at) },
              ':s': { N: String(refusal.status) },
              ':c': { S: refusal.code },
              ':cutoff': { N: String(refusal.at - REFUSAL_RECORD_INTERVAL_MS) },
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
      } catch (err) {
        if (!isConditionFailed(err)) throw err;
        // A refusal as recent held already (remembered: the table's is never earlier), or no report kept for the id (nothing to remember:
        // once a report is, the next refusal must be written).
        const held = (err as { Item?: Record<string, AttributeValue> }).Item?.refusedAt?.N;
        if (held !== undefined) remember(clusterId, Number(held));
        return;
      }
      remember(clusterId, refusal.at);
    },
    async lastRefusal(clusterId) {
      const {
        sdk: { GetItemCommand },
        client,
      } = await sdk();
      const { Item } = await client.send(
        new GetItemCommand({ TableName, Key: key(clusterId), ConsistentRead: true, ProjectionExpression: 'refusedAt, refusedStatus, refusedCode' }),
      );
      if (!Item?.refusedAt?.N) return undefined;
      return { at: Number(Item.refusedAt.N), status: Number(Item.refusedStatus?.N ?? 0), code: Item.refusedCode?.S ?? '' } satisfies Refusal;
    },
    async verifiedWith(clusterId, fingerprint, at) {
      checkFingerprint(fingerprint);
      const memo = `${clusterId} ${fingerprint}`;
      const written = verifiedWritten.get(memo);
      if (written !== undefined && written > at - VERIFIED_RECORD_INTERVAL_MS) return;
      const {
        sdk: { UpdateItemCommand },
        client,
      } = await sdk();
      const setEntry = () =>
        client.send(
          new UpdateItemCommand({
            TableName,
            Key: key(clusterId),
            UpdateExpression: 'SET verifiedBy.#f = :t',
            ConditionExpression: 'attribute_exists(verifiedBy) AND (attribute_not_exists(verifiedBy.#f) OR verifiedBy.#f <= :cutoff)',
            ExpressionAttributeNames: { '#f': fingerprint },
            ExpressionAttributeValues: { ':t': { N: String(at) }, ':cutoff': { N: String(at - VERIFIED_RECORD_INTERVAL_MS) } },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
      const makeMap = () =>
        client.send(
          new UpdateItemCommand({
            TableName,
            Key: key(clusterId),
            UpdateExpression: 'SET verifiedBy = :m',
            ConditionExpression: 'attribute_not_exists(verifiedBy)',
            ExpressionAttributeValues: { ':m': { M: { [fingerprint]: { N: String(at) } } } },
          }),
        );
      // The entry, or the map when the item has none; a map made meanwhile by another container: the entry again.
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          await setEntry();
          rememberVerified(memo, at);
          return;
        } catch (err) {
          if (!isConditionFailed(err)) throw err;
          const map = (err as { Item?: Record<string, AttributeValue> }).Item?.verifiedBy?.M;
          if (map !== undefined) {
            const held = map[fingerprint]?.N;
            if (held !== undefined) rememberVerified(memo, Number(held));
            return;
          }
        }
        try {
          await makeMap();
          rememberVerified(memo, at);
          return;
        } catch (err) {
          if (!isConditionFailed(err)) throw err;
        }
      }
    },
    async verifiedBy(clusterId) {
      const {
        sdk: { GetItemCommand },
        client,
      } = await sdk();
      const { Item } = await client.send(new GetItemCommand({ TableName, Key: key(clusterId), ConsistentRead: true, ProjectionExpression: 'verifiedBy' }));
      const map = Item?.verifiedBy?.M ?? {};
      return VerifiedBySchema.parse(Object.fromEntries(Object.entries(map).flatMap(([f, v]) => (v.N === undefined ? [] : [[f, Number(v.N)]]))));
    },
  };

  /** One element-wise change of the retained set (an empty set is no change: DynamoDB refuses empty sets). */
  async function changeRetained(clusterId: string, op: 'ADD' | 'DELETE', ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const {
      sdk: { UpdateItemCommand },
      client,
    } = await sdk();
    await client.send(
      new UpdateItemCommand({ TableName, Key: retainedKey(clusterId), UpdateExpression: `${op} ids :s`, ExpressionAttributeValues: { ':s': { SS: [...new Set(ids)] } } }),
    );
  }
}

const marksKey = (clusterId: string) => ({ pk: { S: `${clusterId}#marks` } });
const wholeKey = (clusterId: string, digest: string) => ({ pk: { S: `${clusterId}#whole#${digest}` } });
const retainedKey = (clusterId: string) => ({ pk: { S: `${clusterId}#retained` } });

function chunks<T>(all: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(all.length / size) }, (_, i) => all.slice(i * size, (i + 1) * size));
}

function isConditionFailed(err: unknown): boolean {
  return (err as Error | undefined)?.name === 'ConditionalCheckFailedException';
}

/** A transaction cancelled because a condition of it failed (and for no other reason). */
function isTransactionConditionFailed(err: unknown): boolean {
  if ((err as Error | undefined)?.name !== 'TransactionCanceledException') return false;
  const reasons = (err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
  return reasons.some((r) => r.Code === 'ConditionalCheckFailed') && reasons.every((r) => r.Code === 'ConditionalCheckFailed' || r.Code === 'None' || r.Code === undefined);
}
