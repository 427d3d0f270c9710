/**
 * The budget in a DynamoDB table shared by every function instance and every cluster: one
 * item per bucket (partition key `pk` = `<account>#<region>#<bucket>`), holding the token
 * level, the moment it was settled, the AIMD factor and a version. A step reads the item
 * (consistent read), computes the next state and writes it with one UpdateItem conditional on
 * the version it read (optimistic concurrency). A lost race reads again, a bounded number of
 * times; after that the take is refused with a wait rather than looping. Each write carries a
 * fresh `writer` id: when the SDK retries a write whose answer was lost, the retry fails the
 * condition against our own write, and the next read recognises it instead of taking twice.
 */
import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import { BudgetUnavailableError, type RateBudget } from './budget.js';
import type { BudgetOptions } from './options.js';
import { createBudget } from './shared-budget.js';
import type { BucketStore, Step } from './store.js';
import type { BucketState } from './token-bucket.js';

/** Reads and conditional writes per step before giving up on a contended bucket. */
export const DEFAULT_MAX_RACE_ATTEMPTS = 4;
/**
 * The budget sits before every EC2 call, so an unreachable table must fail fast (the caller
 * requeues) rather than hold a request: DynamoDB answers in milliseconds within a Region, and
 * two attempts of at most 1 s each stay well inside the request's deadline.
 */
export const BUDGET_CLIENT_DEFAULTS = { maxAttempts: 2, requestTimeoutMs: 1_000, connectionTimeoutMs: 1_000 } as const;

export interface DynamoDbBudgetOptions extends BudgetOptions {
  tableName: string;
  /** Default: {@link createBudgetDynamoDbClient} with the SDK's region and credentials chain. */
  client?: DynamoDBClient;
  maxRaceAttempts?: number;
}

export interface BudgetClientOptions {
  region?: string;
  /** E.g. moto's URL; the SDK also honours AWS_ENDPOINT_URL_DYNAMODB. */
  endpoint?: string;
  credentials?: DynamoDBClientConfig['credentials'];
}

/** A DynamoDB client with short timeouts and few attempts (see {@link BUDGET_CLIENT_DEFAULTS}). */
export function createBudgetDynamoDbClient(options: BudgetClientOptions = {}): DynamoDBClient {
  return new DynamoDBClient({
    ...(options.region !== undefined ? { region: options.region } : {}),
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    retryMode: 'standard',
    maxAttempts: BUDGET_CLIENT_DEFAULTS.maxAttempts,
    requestHandler: {
      requestTimeout: BUDGET_CLIENT_DEFAULTS.requestTimeoutMs,
      throwOnRequestTimeout: true,
      connectionTimeout: BUDGET_CLIENT_DEFAULTS.connectionTimeoutMs,
    },
  });
}

export function createDynamoDbBudget(options: DynamoDbBudgetOptions): RateBudget {
  const { tableName } = options;
  if (!tableName) throw new Error('createDynamoDbBudget: tableName is required');
  const client = options.client ?? createBudgetDynamoDbClient();
  const maxAttempts = options.maxRaceAttempts ?? DEFAULT_MAX_RACE_ATTEMPTS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error(`createDynamoDbBudget: maxRaceAttempts must be a whole number ≥ 1, got ${maxAttempts}`);

  const send = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (isConditionalCheckFailed(err)) throw err;
      const e = err as Error;
      throw new BudgetUnavailableError(
        `rate budget unavailable: ${what} on DynamoDB table ${tableName} failed (${e?.name ?? 'Error'}: ${e?.message ?? String(err)}); no EC2 call is made without a token`,
        { cause: err },
      );
    }
  };

  const store: BucketStore = {
    async update<R>(id: string, step: (current: BucketState | undefined) => Step<R>, contended: (last: BucketState | undefined) => R): Promise<R> {
      let last: BucketState | undefined;
      let pending: { writer: string; result: R } | undefined;
      for (let attempt = 0; attempt < maxAttempts; attempt++) {
        const read = await send('GetItem', () =>
          client.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: id } }, ConsistentRead: true })),
        );
        // Our last write did land: its answer was lost and the SDK's retry of it failed the condition.
        if (pending && read.Item?.writer?.S === pending.writer) return pending.result;
        const current = read.Item ? decode(read.Item) : undefined;
        last = current?.state;
        const { next, result } = step(last);
        if (!next) return result;
        const writer = randomUUID();
        try {
          await send('UpdateItem', () => client.send(new UpdateItemCommand(write(tableName, id, next, current?.version, writer))));
          return result;
        } catch (err) {
          if (!isConditionalCheckFailed(err)) throw err;
          pending = { writer, result };
        }
      }
      return contended(last);
    },
  };
  return createBudget(store, options);
}

function isConditionalCheckFailed(err: unknown): boolean {
  return err instanceof ConditionalCheckFailedException || (err as Error | undefined)?.name === 'ConditionalCheckFailedException';
}

/** Numbers as DynamoDB takes them: fixed notation, tokens rounded down (never a token too many). */
const fixed = (n: number) => n.toFixed(9);
const tokensOf = (n: number) => (Math.floor(n * 1e9) / 1e9).toFixed(9);

function write(tableName: string, id: string, next: BucketState, version: number | undefined, writer: string) {
  const names: Record<string, string> = { '#tokens': 'tokens', '#at': 'at', '#factor': 'factor', '#version': 'version', '#writer': 'writer' };
  const values: Record<string, AttributeValue> = {
    ':tokens': { N: tokensOf(next.tokens) },
    ':at': { N: fixed(next.at) },
    ':factor': { N: fixed(next.factor) },
    ':next': { N: String((version ?? 0) + 1) },
    ':writer': { S: writer },
  };
  const set = ['#tokens = :tokens', '#at = :at', '#factor = :factor', '#version = :next', '#writer = :writer'];
  if (next.decreasedAt !== undefined) {
    names['#decreasedAt'] = 'decreasedAt';
    values[':decreasedAt'] = { N: fixed(next.decreasedAt) };
    set.push('#decreasedAt = :decreasedAt');
  }
  if (next.promisedUntil !== undefined) {
    names['#promisedUntil'] = 'promisedUntil';
    values[':promisedUntil'] = { N: fixed(next.promisedUntil) };
    set.push('#promisedUntil = :promisedUntil');
  }
  if (version !== undefined) values[':version'] = { N: String(version) };
  return {
    TableName: tableName,
    Key: { pk: { S: id } },
    UpdateExpression: `SET ${set.join(', ')}`,
    ConditionExpression: version === undefined ? 'attribute_not_exists(pk)' : '#version = :version',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

function decode(item: Record<string, AttributeValue>): { state: BucketState; version: number } {
  const num = (name: string): number | undefined => {
    const raw = item[name]?.N;
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new BudgetUnavailableError(`rate budget item ${item.pk?.S ?? '?'}: attribute ${name} is not a number (${raw})`);
    return n;
  };
  const need = (name: string): number => {
    const n = num(name);
    if (n === undefined) throw new BudgetUnavailableError(`rate budget item ${item.pk?.S ?? '?'}: attribute ${name} is missing`);
    return n;
  };
  const decreasedAt = num('decreasedAt');
  const promisedUntil = num('promisedUntil');
  return {
    state: {
      tokens: need('tokens'),
      at: need('at'),
      factor: need('factor'),
      ...(decreasedAt !== undefined ? { decreasedAt } : {}),
      ...(promisedUntil !== undefined ? { promisedUntil } : {}),
    },
    version: need('version'),
  };
}
