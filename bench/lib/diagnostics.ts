/**
 * What the benchmark watches besides the milestones, to explain a slow run: the backend's
 * outcomes per item kind, the forwarder's warnings, the local controllers' errors, and how
 * busy the one process that runs it all is (event-loop delay, CPU).
 */
import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';
import type { Item, Result } from '../../lib/contract/index.js';
import type { Logger } from '../../lib/forwarder/index.js';

/** Counts by a string key, most frequent first when listed. */
export class Tally {
  private readonly counts = new Map<string, number>();

  add(key: string, by = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + by);
  }

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  get total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }

  /** The sum of the counts whose key passes `predicate`. */
  sumWhere(predicate: (key: string) => boolean): number {
    let sum = 0;
    for (const [key, n] of this.counts) if (predicate(key)) sum += n;
    return sum;
  }

  top(limit = Infinity): Array<[string, number]> {
    return [...this.counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, limit);
  }
}

/** Replaces IDs and numbers in a message so that like messages count together. */
export function messageShape(message: string): string {
  return message
    .replace(/\b(vol|i|r|eni)-[0-9a-f]+\b/g, '$1-…')
    .replace(/\bpvc-[0-9a-f-]{36}\b/g, 'pvc-…')
    .replace(/\bcsi-[0-9a-f]{64}\b/g, 'csi-…')
    .replace(/\b[\w.-]+\.ec2\.internal\b/g, '<node>')
    .replace(/\/dev\/xvd[a-z]+/g, '/dev/xvd…')
    .replace(/\d+(\.\d+)?/g, 'N')
    .slice(0, 160);
}

/** The event-loop sampler's timer; its delay beyond this is what the report shows. */
const LOOP_RESOLUTION_MS = 10;

export class Diagnostics {
  /** Backend results by `kind outcome`. */
  readonly outcomes = new Tally();
  /** Failed results by `kind reason`. */
  readonly failures = new Tally();
  /** Requeue messages by shape. */
  readonly requeues = new Tally();
  /** Forwarder warnings and errors by `level msg`. */
  readonly forwarderLogs = new Tally();
  /** Local controllers' unexpected sync errors by controller. */
  readonly controllerErrors = new Tally();
  readonly controllerErrorSamples: string[] = [];
  private readonly loop: ELDHistogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  private cpuStart = process.cpuUsage();
  private wallStart = performance.now();

  readonly onResult = (_clusterId: string, item: Item, result: Result): void => {
    this.outcomes.add(`${item.kind} ${result.outcome}`);
    if (result.outcome === 'failed') this.failures.add(`${item.kind} ${result.reason}`);
    if (result.outcome === 'requeue') this.requeues.add(`${item.kind}: ${messageShape(result.message ?? '')}`);
  };

  readonly logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (msg) => this.forwarderLogs.add(`warn ${msg}`),
    error: (msg) => this.forwarderLogs.add(`error ${msg}`),
  };

  readonly onControllerError = (error: unknown, context: { controller: string; key: string }): void => {
    this.controllerErrors.add(context.controller);
    if (this.controllerErrorSamples.length < 5) {
      this.controllerErrorSamples.push(`${context.controller} ${context.key}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  /** Starts measuring the process from now (after setup). */
  start(): void {
    this.loop.reset();
    this.loop.enable();
    this.cpuStart = process.cpuUsage();
    this.wallStart = performance.now();
  }

  /** CPU time over wall time since `start`, and the event loop's delay (beyond the sampler's timer), in ms. */
  processLoad(): { cpuShare: number; loopP50Ms: number; loopP99Ms: number; loopMaxMs: number } {
    const cpu = process.cpuUsage(this.cpuStart);
    const wallMs = performance.now() - this.wallStart;
    return {
      cpuShare: (cpu.user + cpu.system) / 1000 / Math.max(1, wallMs),
      loopP50Ms: excess(this.loop.percentile(50)),
      loopP99Ms: excess(this.loop.percentile(99)),
      loopMaxMs: excess(this.loop.max),
    };
  }

  /**
   * The event loop's longest delay (beyond the sampler's timer) since the last call, in ms.
   * Resets the sampler: not for a run that reads {@link processLoad} too.
   */
  loopMaxSinceLastMs(): number {
    const max = excess(this.loop.max);
    this.loop.reset();
    return max;
  }

  stop(): void {
    this.loop.disable();
  }
}

/** A sample of the event-loop histogram (ns, timer interval included) as ms of delay beyond the timer. */
function excess(ns: number): number {
  return Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS);
}
