/**
 * What the budget paces at, and how it adapts. Defaults are AWS's published buckets
 * (lib/ec2/throttling.ts) at {@link DEFAULT_SHARE}; a Region can override the share and
 * any bucket (an account with raised limits), e.g. from `VOLHOOK_BUDGET_RATES`.
 */
import * as z from 'zod/mini';
import { deferred } from '../contract/deferred.js';
import '../contract/zod-messages.js';
import { bucketSpec, isBucketName, type BucketSpec } from '../ec2/throttling.js';

/**
 * The share of AWS's published capacity and refill the budget uses by default. Other tools
 * share the account's buckets (the console, CloudFormation, other controllers, people running
 * the CLI), and 2 % of every bucket stays theirs. Not lower: the floor of a burst is set by the
 * refill, so a burst of 1,000 attaches takes (1000 − 49) / 4.9 = 194 s at 0.98 against AWS's
 * 190 s (1.02×); 0.95 cost 1.055× before the first call, more than half of what a burst may
 * lose to everything else (start-up, the last volume's attach). When others take more, EC2's
 * RequestLimitExceeded steps the rate down (AIMD) for as long as they do.
 */
export const DEFAULT_SHARE = 0.98;

export interface AimdOptions {
  /** Multiplicative decrease on RequestLimitExceeded: the rate factor is multiplied by this. */
  decrease: number;
  /** Additive increase: the rate factor grows by this much per second, up to 1. */
  increasePerSecond: number;
  /** The factor never falls below this, so a throttled bucket still drains slowly. */
  minFactor: number;
  /**
   * After a decrease, further RequestLimitExceeded within this many ms do not step down
   * again: the calls granted before the decrease are still answering and say nothing new.
   */
  holdMs: number;
}

/**
 * 0.7 is the decrease of the AWS SDKs' own adaptive retry mode (CUBIC's β). Recovering 1 %
 * of the rate per second brings one step back in 30 s and the floor (0.1) back in 90 s: slow
 * enough that a neighbour still using the bucket throttles us again before we overrun it by much.
 */
export const DEFAULT_AIMD: AimdOptions = { decrease: 0.7, increasePerSecond: 0.01, minFactor: 0.1, holdMs: 1_000 };

// zod/mini, as the contract's schemas, built on first use: classic zod would add its own copy
// of the schema classes (and JSON Schema support) to every cold start of the function, and a
// deployed function (VOLHOOK_BUDGET_TABLE, no VOLHOOK_BUDGET_RATES) needs none of these at
// import. z.number() refuses Infinity and NaN itself.
const bucketSpecSchema = deferred(() => z.strictObject({
  capacity: z.number().check(z.positive()),
  refillPerSecond: z.number().check(z.positive()),
}));

const regionRatesSchema = deferred(() => z.strictObject({
  /** Share of the buckets' capacity and refill used in this Region, in (0, 1]. */
  share: z.optional(z.number().check(z.gt(0), z.lte(1))),
  /** Buckets of this Region at other than AWS's default sizes (raised limits); the share applies to them too. */
  buckets: z.optional(
    z.record(z.string(), bucketSpecSchema).check(
      z.superRefine((buckets, ctx) => {
        for (const name of Object.keys(buckets)) {
          if (!isBucketName(name)) ctx.addIssue({ code: 'custom', path: [name], message: `unknown throttling bucket ${JSON.stringify(name)} (see lib/ec2/throttling.ts)` });
        }
      }),
    ),
  ),
}));

const REGION_NAME = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/** Per-Region overrides, keyed by Region name (e.g. `eu-west-1`). */
export const budgetRatesSchema = deferred(() => z.record(z.string(), regionRatesSchema).check(
  z.superRefine((rates, ctx) => {
    for (const region of Object.keys(rates)) {
      if (!REGION_NAME.test(region)) ctx.addIssue({ code: 'custom', path: [region], message: `not a Region name (e.g. eu-west-1)` });
    }
  }),
));
export type BudgetRates = z.infer<typeof budgetRatesSchema>;

export interface BudgetOptions {
  /** Epoch ms; injected for scripted-clock tests. Default `Date.now`. */
  now?: () => number;
  /** Default share of AWS's published rates, in (0, 1]. Default {@link DEFAULT_SHARE}. */
  share?: number;
  rates?: BudgetRates;
  aimd?: Partial<AimdOptions>;
  /**
   * Refill × this. Only for the local EC2 simulator run faster than real time (its
   * `timeScale` multiplies its refill the same way); 1 against AWS.
   */
  timeScale?: number;
}

/** A bucket as the budget paces it: the share applied, refill per ms. */
export interface BucketLimits {
  capacity: number;
  refillPerMs: number;
}

export interface ResolvedOptions {
  now: () => number;
  aimd: AimdOptions;
  limits(region: string, bucket: string): BucketLimits;
}

/** Refuses bad options with a message naming the field; never falls back silently. */
export function resolveOptions(options: BudgetOptions = {}): ResolvedOptions {
  // Plain checks, as for aimd below: the in-memory budget is built at import, and a schema
  // built there would be a cold start's first (and slowest) use of zod.
  const share = options.share ?? DEFAULT_SHARE;
  if (!(typeof share === 'number' && share > 0 && share <= 1)) throw new Error(`budget share must be in (0, 1], got ${share}`);
  const timeScale = options.timeScale ?? 1;
  if (!(typeof timeScale === 'number' && timeScale > 0 && Number.isFinite(timeScale))) {
    throw new Error(`budget timeScale must be a positive number, got ${timeScale}`);
  }
  const rates = options.rates === undefined ? {} : parseBudgetRates(options.rates, 'budget rates');
  const aimd = { ...DEFAULT_AIMD, ...options.aimd };
  if (!(aimd.decrease > 0 && aimd.decrease < 1)) throw new Error(`budget aimd.decrease must be in (0, 1), got ${aimd.decrease}`);
  if (!(aimd.increasePerSecond > 0)) throw new Error(`budget aimd.increasePerSecond must be positive, got ${aimd.increasePerSecond}`);
  if (!(aimd.minFactor > 0 && aimd.minFactor <= 1)) throw new Error(`budget aimd.minFactor must be in (0, 1], got ${aimd.minFactor}`);
  if (!(aimd.holdMs >= 0)) throw new Error(`budget aimd.holdMs must be ≥ 0, got ${aimd.holdMs}`);
  return {
    now: options.now ?? Date.now,
    aimd,
    limits(region, bucket) {
      const regional = rates[region];
      const spec: BucketSpec = regional?.buckets?.[bucket] ?? bucketSpec(bucket);
      const s = regional?.share ?? share;
      return { capacity: spec.capacity * s, refillPerMs: (spec.refillPerSecond * s * timeScale) / 1000 };
    },
  };
}

/** Parses rate overrides, naming the offending field: `<source>: eu-west-1.buckets.CreateVolume.capacity: …`. */
export function parseBudgetRates(input: unknown, source: string): BudgetRates {
  const parsed = budgetRatesSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`);
  throw new Error(`${source}: ${issues.join('; ')}`);
}
