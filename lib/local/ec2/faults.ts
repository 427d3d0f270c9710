import type { ActionFault, FaultConfig } from './config.js';
import type { Random } from './random.js';

/** What the injected faults decided for one call. */
export interface FaultDecision {
  delayMs: number;
  error?: ActionFault & { code: string };
}

/**
 * Rolls every fault configured for the action (and for `*`). Delays add up; the first error
 * that fires wins. Each rule draws from the seeded PRNG exactly once per call, so a seed
 * replays the same sequence.
 */
export function decideFaults(config: FaultConfig, action: string, rng: Random): FaultDecision {
  const rules = [config[action], config['*']].flatMap((r) => (r === undefined ? [] : Array.isArray(r) ? r : [r]));
  const decision: FaultDecision = { delayMs: 0 };
  for (const rule of rules) {
    if (!(rng.next() < rule.rate)) continue;
    decision.delayMs += rule.delayMs ?? 0;
    if (rule.code !== undefined && !decision.error) decision.error = { ...rule, code: rule.code };
  }
  return decision;
}
