/**
 * The DynamoDB rate budget against a real DynamoDB API: moto_server, started on a free
 * 127.0.0.1 port (the test fails if moto_server is missing). Two budgets with their own
 * clients stand for two backends (two Lambda instances, or two clusters' requests) sharing one
 * table; the clock is scripted, so the counts are exact whatever the machine's speed.
 *
 * One gap of moto is closed here, and only that one: DynamoDB applies a conditional write
 * atomically, while moto_server (threaded) checks UpdateItem's condition and then applies it
 * with no lock between (moto/dynamodb/models update_item), so two writes conditional on the same
 * version can both succeed there. Measured: over 30 s of scripted takes, 7 tokens too many.
 * The backends' clients therefore send their UpdateItems to moto one at a time; reads, and the
 * read → compute → conditional write of each backend, still interleave, so races are lost and
 * retried as against DynamoDB (the test counts them).
 */
import { CreateTableCommand, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { budgetFromEnvironment, createBudgetDynamoDbClient, createDynamoDbBudget, DEFAULT_SHARE, type RateBudget } from '../../lib/budget/index.js';
import { bucketSpec } from '../../lib/ec2/throttling.js';
import { TokenBucket } from '../../lib/local/ec2/buckets.js';
import { seededRandom } from '../../lib/local/ec2/random.js';
import { budgetContract, keyOf, scriptedClock } from '../budget/budget-contract.js';
import { startMoto, type Moto } from './support/moto.js';

const TABLE = 'volhook-test-rate-budget';
const REGION = 'eu-west-1';
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
let moto: Moto;
let admin: DynamoDBClient;
const clients: DynamoDBClient[] = [];

let writing: Promise<unknown> = Promise.resolve();
let lostRaces = 0;

/** A backend of its own: its own client (connections, retries), the shared table. */
function backendClient(): DynamoDBClient {
  const client = createBudgetDynamoDbClient({ region: REGION, endpoint: moto.url, credentials });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'UpdateItemCommand') return next(args);
      const sent = writing.then(() => next(args));
      writing = sent.catch(() => undefined);
      try {
        return await sent;
      } catch (err) {
        if ((err as Error).name === 'ConditionalCheckFailedException') lostRaces++;
        throw err;
      }
    },
    { step: 'initialize', name: 'oneConditionalWriteAtATime' },
  );
  clients.push(client);
  return client;
}

beforeAll(async () => {
  moto = await startMoto();
  admin = new DynamoDBClient({ region: REGION, endpoint: moto.url, credentials });
  // The table as serverless.yml declares it.
  await admin.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
    }),
  );
}, 90_000);

afterAll(async () => {
  for (const c of clients) c.destroy();
  admin?.destroy();
  vi.unstubAllEnvs();
  await moto?.stop();
});

budgetContract('DynamoDB budget over moto', (options) => createDynamoDbBudget({ ...options, tableName: TABLE, client: backendClient() }));

describe('two backends sharing one DynamoDB budget over moto', () => {
  /** The second backend as deployed: configured by its environment only. */
  function fromEnvironment(now: () => number, extra: NodeJS.ProcessEnv = {}): RateBudget {
    vi.stubEnv('AWS_ACCESS_KEY_ID', credentials.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', credentials.secretAccessKey);
    return budgetFromEnvironment({ ...process.env, VOLHOOK_BUDGET_TABLE: TABLE, AWS_ENDPOINT_URL_DYNAMODB: moto.url, AWS_REGION: REGION, ...extra }, { now });
  }

  it('concurrent takes for 20 s of scripted time -> never more grants than the bucket allows; EC2 would throttle none', async () => {
    const clock = scriptedClock();
    const start = clock.at();
    const a = createDynamoDbBudget({ tableName: TABLE, client: backendClient(), now: clock.now });
    const b = createDynamoDbBudget({ tableName: TABLE, client: backendClient(), now: clock.now });
    const key = keyOf('AttachVolume', REGION);
    const racesBefore = lostRaces;
    // EC2's own bucket for AttachVolume (50 + 5/s), as the simulator keeps it.
    const ec2 = new TokenBucket(bucketSpec('AttachVolume'), start);
    const rng = seededRandom(11);
    const random = () => rng.next();
    let granted = 0;
    let refusedByEc2 = 0;
    let steps = 0;
    while (clock.at() - start < 20_000) {
      clock.advance(Math.floor(random() * 300));
      // Three requests per backend at the same moment: their reads and conditional writes interleave.
      const grants = await Promise.all([a, a, a, b, b, b].map((budget) => budget.take(key, 1 + Math.floor(random() * 8))));
      for (const g of grants) {
        granted += g.granted;
        for (let i = 0; i < g.granted; i++) if (!ec2.take(clock.at(), 1)) refusedByEc2++;
      }
      steps++;
    }
    const elapsedS = (clock.at() - start) / 1000;
    // At the default share: 50 × share tokens of burst, 5 × share per second.
    const allowed = 50 * DEFAULT_SHARE + 5 * DEFAULT_SHARE * elapsedS;
    expect(steps).toBeGreaterThan(100);
    expect(refusedByEc2).toBe(0);
    expect(lostRaces - racesBefore).toBeGreaterThan(0);
    expect(granted).toBeLessThanOrEqual(Math.floor(allowed));
    // Demand always exceeded supply: races lost to the other backend leave tokens for the next step, not lost.
    expect(granted).toBeGreaterThanOrEqual(Math.floor(allowed) - 8);
  }, 120_000);

  it('a backend configured by its environment (VOLHOOK_BUDGET_TABLE, AWS_ENDPOINT_URL_DYNAMODB) -> shares the bucket with the others', async () => {
    const clock = scriptedClock();
    const a = createDynamoDbBudget({ tableName: TABLE, client: backendClient(), now: clock.now, share: 1 });
    const b = fromEnvironment(clock.now, { VOLHOOK_BUDGET_SHARE: '1' });
    const key = keyOf('DetachVolume', REGION);
    expect((await a.take(key, 30)).granted).toBe(30);
    const rest = await b.take(key, 30);
    expect(rest.granted).toBe(20);
    expect(rest.waitMs(0)).toBe(200);
    clock.advance(1_000);
    expect((await a.take(key, 30)).granted).toBe(5);
  });

  it('one backend told RequestLimitExceeded -> the other sees the lowered rate at once, and the rate recovers', async () => {
    const clock = scriptedClock();
    const aimd = { decrease: 0.5, increasePerSecond: 0.05, minFactor: 0.1, holdMs: 1_000 };
    const a = createDynamoDbBudget({ tableName: TABLE, client: backendClient(), now: clock.now, share: 1, aimd });
    const b = createDynamoDbBudget({ tableName: TABLE, client: backendClient(), now: clock.now, share: 1, aimd });
    const key = keyOf('CreateVolume', REGION);
    expect((await b.take(key, 10)).granted).toBe(10);
    await a.throttled(key);
    // b: the bucket is empty and refills at 2.5/s, not 5/s.
    const lowered = await b.take(key, 2);
    expect(lowered.granted).toBe(0);
    expect([lowered.waitMs(0), lowered.waitMs(1)]).toEqual([400, 800]);
    // Another throttle from b within holdMs: emptied again, no second step down.
    clock.advance(500);
    await b.throttled(key);
    // a's refused items get slots after the two promised to b, one token apart at the factor of
    // one step down, recovering (0.525: 381 ms), not of a second step (0.2625: 762 ms).
    const after = await a.take(key, 2);
    expect(after.granted).toBe(0);
    expect(after.waitMs(1) - after.waitMs(0)).toBeGreaterThan(300);
    expect(after.waitMs(1) - after.waitMs(0)).toBeLessThan(400);
    // 10 s after the decrease the factor is back at 1. Refilled since b's throttle (9.5 s, factor
    // 0.525 → 1): 5/s × (0.525 × 9.5 + 0.05 × 9.5² / 2) = 36.22 tokens; the next one at the full 5/s.
    clock.advance(9_500);
    const recovered = await a.take(key, 200);
    expect(recovered.granted).toBe(36);
    expect([recovered.waitMs(0), recovered.waitMs(1)]).toEqual([157, 357]);
  });

  it('one item per bucket in the table, holding the level, the AIMD factor and the version', async () => {
    const clock = scriptedClock();
    const budget = createDynamoDbBudget({ tableName: TABLE, client: backendClient(), now: clock.now, share: 1 });
    const key = keyOf('DeleteVolume', REGION);
    await budget.take(key, 3);
    await budget.take(key, 4);
    await budget.throttled(key);
    const { Items = [] } = await admin.send(new ScanCommand({ TableName: TABLE, FilterExpression: 'begins_with(pk, :p)', ExpressionAttributeValues: { ':p': { S: `${key.account}#` } } }));
    expect(Items).toHaveLength(1);
    const stored = Items[0]!;
    expect(stored.pk?.S).toBe(`${key.account}#${REGION}#DeleteVolume`);
    expect([stored.tokens?.N, stored.factor?.N, stored.version?.N, stored.decreasedAt?.N].map(Number)).toEqual([0, 0.7, 3, clock.at()]);
  });

  it('budget from an environment whose table does not exist -> BudgetUnavailableError naming it', async () => {
    const budget = fromEnvironment(Date.now, { VOLHOOK_BUDGET_TABLE: 'no-such-table' });
    await expect(budget.take(keyOf('CreateVolume', REGION), 1)).rejects.toThrow(/rate budget unavailable: GetItem on DynamoDB table no-such-table failed \(ResourceNotFoundException/);
  });
});
