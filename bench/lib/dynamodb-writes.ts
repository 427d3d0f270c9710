/**
 * A pass-through proxy in front of a DynamoDB endpoint (moto_server) that counts the write
 * requests it carries, by operation and by table: what DynamoDB bills as writes. A conditional
 * write whose condition fails is counted too (DynamoDB charges it a write all the same).
 */
import { Agent, createServer, request, type Server } from 'node:http';
import { buffer } from 'node:stream/consumers';
import { GetItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as z from 'zod';
import { listen } from '../../lib/http/index.js';

/** The operations that write, as `X-Amz-Target: DynamoDB_20120810.<operation>` names them. */
export const WRITE_OPERATIONS = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'] as const;

export interface WriteCounts {
  /** Write requests, every table. */
  total: number;
  byOperation: Record<string, number>;
  byTable: Record<string, number>;
  /** Single-item writes (PutItem, UpdateItem, DeleteItem) by the item written: `<table> <pk>`. */
  byItem: Record<string, number>;
}

export interface DynamoDbWriteCounter {
  url: string;
  /** The counts so far (a copy). */
  counts(): WriteCounts;
  stop(): Promise<void>;
}

/** The part of a request body that names its tables: one for the item operations, several for the batch ones. */
const ItemKeySchema = z.object({ TableName: z.string(), Key: z.optional(z.object({ pk: z.object({ S: z.string() }) })), Item: z.optional(z.object({ pk: z.object({ S: z.string() }) })) });

/** `<table> <pk>` of a single-item write, if it names one. */
export function itemOf(body: string): string | undefined {
  try {
    const parsed = ItemKeySchema.safeParse(JSON.parse(body));
    if (!parsed.success) return undefined;
    const pk = parsed.data.Key?.pk.S ?? parsed.data.Item?.pk.S;
    return pk === undefined ? undefined : `${parsed.data.TableName} ${pk}`;
  } catch {
    return undefined;
  }
}

const BodySchema = z.object({
  TableName: z.optional(z.string()),
  RequestItems: z.optional(z.record(z.string(), z.unknown())),
  TransactItems: z.optional(z.array(z.record(z.string(), z.object({ TableName: z.optional(z.string()) })))),
});

/** The tables a write request writes to. */
export function tablesOf(body: string): string[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return ['?'];
  }
  const parsed = BodySchema.safeParse(json);
  if (!parsed.success) return ['?'];
  const b = parsed.data;
  if (b.TableName) return [b.TableName];
  if (b.RequestItems) return Object.keys(b.RequestItems);
  if (b.TransactItems) return [...new Set(b.TransactItems.flatMap((t) => Object.values(t).flatMap((op) => (op.TableName ? [op.TableName] : []))))];
  return ['?'];
}

export function subtractWrites(after: WriteCounts, before: WriteCounts): WriteCounts {
  const minus = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.entries(a).map(([k, n]) => [k, n - (b[k] ?? 0)]).filter(([, n]) => n !== 0));
  return {
    total: after.total - before.total,
    byOperation: minus(after.byOperation, before.byOperation),
    byTable: minus(after.byTable, before.byTable),
    byItem: minus(after.byItem, before.byItem),
  };
}

export async function startDynamoDbWriteCounter(upstream: string): Promise<DynamoDbWriteCounter> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  const counts: WriteCounts = { total: 0, byOperation: {}, byTable: {}, byItem: {} };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await buffer(req);
      const operation = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
      if ((WRITE_OPERATIONS as readonly string[]).includes(operation)) {
        counts.total++;
        counts.byOperation[operation] = (counts.byOperation[operation] ?? 0) + 1;
        const text = body.toString('utf8');
        for (const table of tablesOf(text)) counts.byTable[table] = (counts.byTable[table] ?? 0) + 1;
        const item = operation === 'BatchWriteItem' || operation === 'TransactWriteItems' ? undefined : itemOf(text);
        if (item) counts.byItem[item] = (counts.byItem[item] ?? 0) + 1;
      }
      const upstreamReq = request(target, { method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstreamReq.on('error', () => res.destroy());
      upstreamReq.end(body);
    })().catch(() => res.destroy());
  });
  const listening = await listen(server, 0, '127.0.0.1');
  return {
    url: listening.url,
    counts: () => ({ total: counts.total, byOperation: { ...counts.byOperation }, byTable: { ...counts.byTable }, byItem: { ...counts.byItem } }),
    stop: () => {
      agent.destroy();
      return listening.close();
    },
  };
}


/**
 * An item's size as DynamoDB measures it for capacity (attribute names plus values; numbers
 * about one byte per two digits), bytes: a write costs one write unit per 1 KB of the larger of
 * the item before and after, and a conditional write that fails costs the same.
 */
export function itemBytes(item: Record<string, AttributeValue>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += Buffer.byteLength(name) + valueBytes(value);
  return bytes;
}

function valueBytes(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return Math.ceil(v.N.replace(/[-.]/g, '').length / 2) + 1;
  if (v.B !== undefined) return v.B.byteLength;
  if (v.SS) return v.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (v.NS) return v.NS.reduce((sum, n) => sum + Math.ceil(n.length / 2) + 1, 0);
  if (v.BS) return v.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (v.L) return 3 + v.L.reduce((sum, e) => sum + 1 + valueBytes(e), 0);
  if (v.M) return 3 + Object.entries(v.M).reduce((sum, [k, e]) => sum + 1 + Buffer.byteLength(k) + valueBytes(e), 0);
  return 1;
}

/** Write units the single-item writes `byItem` cost, each at its item's size now (read from `client`'s table). */
export async function writeUnits(client: DynamoDBClient, byItem: Record<string, number>): Promise<{ units: number; largestItemBytes: number }> {
  let units = 0;
  let largestItemBytes = 0;
  for (const [item, writes] of Object.entries(byItem)) {
    const space = item.indexOf(' ');
    const TableName = item.slice(0, space);
    const pk = item.slice(space + 1);
    const { Item } = await client.send(new GetItemCommand({ TableName, Key: { pk: { S: pk } }, ConsistentRead: true }));
    const bytes = Item ? itemBytes(Item) : 0;
    largestItemBytes = Math.max(largestItemBytes, bytes);
    units += writes * Math.max(1, Math.ceil(bytes / 1024));
  }
  return { units, largestItemBytes };
}
