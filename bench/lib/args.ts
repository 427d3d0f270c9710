/** The command line of `npm run bench`, parsed and checked once. */
import { parseArgs } from 'node:util';

export type Scenario = 'a' | 'b' | 'c' | 'd' | 'e' | 'report';
export const SCENARIOS: readonly Scenario[] = ['a', 'b', 'c', 'd', 'e', 'report'];
/** What runs without --only. */
const DEFAULT_SCENARIOS: readonly Scenario[] = ['a', 'b', 'c'];
/** (d) runs the simulator this much faster unless --time-scale says otherwise: two runs of 3 × 300 claims in 10 minutes. */
export const FLEET_TIME_SCALE = 2;
export type FaultRuns = 'both' | 'on' | 'off';
/** (e) makes its volumes with the simulator this much faster unless --time-scale says otherwise. */
export const REST_TIME_SCALE = 20;
/**
 * (e) lets its hour at rest pass this much faster unless --rest-scale says otherwise: a resync
 * every 75 s, no more often than the backend's once-a-minute records (not scaled), so each
 * request writes what it would at scale 1; the hour takes 15 minutes.
 */
export const REST_SCALE = 4;

export interface BenchArgs {
  /** PVCs (each with one pod) in the burst of (b). */
  n: number;
  /** The simulator's time scale for (a) and (b); 1 = AWS's real latencies and refill rates. */
  timeScale: number;
  only: Scenario[];
  quick: boolean;
  /** PRNG seed of the simulator's latencies. */
  seed: number;
  /** Objects of each kind (PVCs, PVs) cached by the forwarder in (c). */
  objects: number;
  /** Global bound of (b), seconds. */
  timeoutSeconds: number;
  /** Backend processes of (b) behind one URL (each its own EC2 client); > 1 puts the budget in moto's DynamoDB. */
  backends: number;
  /** Local Kubernetes clusters (API, controllers, forwarder) of (b), sharing one EC2 account. */
  clusters: number;
  /** PVs (each bound and attached) of the cluster whose volume report `report` sends. */
  pvs: number;
  /** (d): clusters, claims (with a pod each) per cluster, backend processes; run with faults, without, or both. */
  fleet: { clusters: number; claims: number; backends: number; faults: FaultRuns };
  /** (e): volumes bound and attached (--n), clusters, backend processes, and how much faster than real time the hour at rest passes. */
  rest: { n: number; clusters: number; backends: number; restScale: number };
  /** `ebs-csi`: instead of (a)–(c), the same workload against volhook and the reference EBS CSI stack, side by side (peer.ts). */
  peer?: PeerName;
  /** The command to print for reproducing this run. */
  command: string;
}

export const PEERS = ['ebs-csi'] as const;
export type PeerName = (typeof PEERS)[number];

export const USAGE = `usage: npm run bench -- [--n 1000] [--time-scale 1] [--only a,b,c,d,e,report] [--quick]
                            [--seed 1] [--objects 10000] [--timeout 1200]
                            [--backends 1] [--clusters 1] [--pvs 20000] [--peer ebs-csi]
                            [--fleet-clusters 3] [--fleet-claims 300] [--fleet-backends 3]
                            [--faults both|on|off] [--rest-clusters 5] [--rest-backends 1]
                            [--rest-scale ${REST_SCALE}]
  --n           PVCs + pods in the burst (b); default 1000 (100 with --quick); in (e), the
                volumes bound and attached before the hour at rest, default 5000 (200 with --quick)
  --time-scale  simulator latencies and bucket refill ÷/× this; default 1 (${FLEET_TIME_SCALE} with d in
                --only, ${REST_TIME_SCALE} with e, 10 with --quick). volhook's own delays (backoff, requeues, resync) are
                never scaled
  --only        scenarios to run: a (one PVC), b (burst), c (forwarder memory), d (a fleet:
                clusters × claims against backend processes, judged at the end), report (one
                cluster's volume report sent plain and gzip'd: requests and bytes), e (an hour at
                rest: n volumes bound and attached over clusters, then backend requests, EC2
                calls, DynamoDB writes and forwarder CPU and memory counted); default a,b,c
  --quick       smoke run: n=100 at time scale 10, 2,000 objects in (c)
  --seed        simulator PRNG seed (latencies); default 1
  --objects     PVCs and PVs (each) cached by the forwarder in (c); default 10000
  --timeout     give up on (b), or on each phase of (d), after this many seconds; default 1200
  --backends    (b) with this many backend processes, each its own EC2 client, behind one
                URL; more than 1 keeps the rate budget in DynamoDB (moto_server); default 1
                (the backend in the bench process)
  --clusters    (b) with this many clusters (Kubernetes API, controllers, forwarder each)
                against one EC2 account, the n claims dealt out over them; default 1
  --pvs         PVs of the cluster whose volume report (report) sends; default 20000
  --fleet-clusters, --fleet-claims, --fleet-backends
                (d): clusters, WaitForFirstConsumer claims with a pod per cluster, backend
                processes sharing the rate budget and replay store in DynamoDB (moto_server);
                default 3, 300, 3 (2, 30, 2 with --quick)
  --faults      (d) with faults (on: EC2 refusing calls, losing answers, leaving attachments
                stuck attaching; a forwarder leader and a backend SIGKILLed, a watch ended
                with 410, mid-burst), without (off), or each in turn (both); default both
  --rest-clusters, --rest-backends
                (e): clusters (each its forwarder process) and backend processes sharing the
                replay and report tables in DynamoDB (moto_server), and the budget's with more
                than one; default 5, 1 (2, 1 with --quick)
  --rest-scale  (e): the hour at rest passes this much faster (the forwarders resync every
                300 s ÷ this; the scheduled audit runs once); default ${REST_SCALE}
  --peer        ebs-csi: instead of a–c, one workload (n claims with pods, 100 expansions,
                100 snapshots and restores, then delete all) against volhook and then the
                reference EBS CSI controller stack, each on a fresh real control plane and
                simulator (same seed and rates); needs Go (tools/kube, tools/ebs-csi)`;

/** Thrown for a bad flag; run.ts prints it with the usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseBenchArgs(argv: readonly string[]): BenchArgs | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        n: { type: 'string' },
        'time-scale': { type: 'string' },
        only: { type: 'string' },
        quick: { type: 'boolean', default: false },
        seed: { type: 'string' },
        objects: { type: 'string' },
        timeout: { type: 'string' },
        backends: { type: 'string' },
        clusters: { type: 'string' },
        pvs: { type: 'string' },
        'fleet-clusters': { type: 'string' },
        'fleet-claims': { type: 'string' },
        'fleet-backends': { type: 'string' },
        faults: { type: 'string' },
        'rest-clusters': { type: 'string' },
        'rest-backends': { type: 'string' },
        'rest-scale': { type: 'string' },
        peer: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const v = parsed.values;
  if (v.help) return 'help';
  const quick = v.quick === true;
  const n = integer('--n', v.n, quick ? 100 : 1000, 1, 100_000);
  const only = scenarios(v.only);
  const timeScale = number('--time-scale', v['time-scale'], quick ? 10 : only.includes('d') ? FLEET_TIME_SCALE : only.includes('e') ? REST_TIME_SCALE : 1, 0.01, 1000);
  const seed = integer('--seed', v.seed, 1, 0, 2 ** 32 - 1);
  const objects = integer('--objects', v.objects, quick ? 2000 : 10_000, 0, 1_000_000);
  const timeoutSeconds = number('--timeout', v.timeout, 1200, 1, 24 * 3600);
  const backends = integer('--backends', v.backends, 1, 1, 32);
  const clusters = integer('--clusters', v.clusters, 1, 1, 8);
  const pvs = integer('--pvs', v.pvs, 20_000, 1, 200_000);
  const fleet = {
    clusters: integer('--fleet-clusters', v['fleet-clusters'], quick ? 2 : 3, 2, 8),
    claims: integer('--fleet-claims', v['fleet-claims'], quick ? 30 : 300, 1, 5000),
    backends: integer('--fleet-backends', v['fleet-backends'], quick ? 2 : 3, 1, 16),
    faults: faultRuns(v.faults),
  };
  const rest = {
    n: v.n === undefined ? (quick ? 200 : 5000) : n,
    clusters: integer('--rest-clusters', v['rest-clusters'], quick ? 2 : 5, 1, 16),
    backends: integer('--rest-backends', v['rest-backends'], 1, 1, 16),
    restScale: number('--rest-scale', v['rest-scale'], REST_SCALE, 1, 3600),
  };
  let peer: PeerName | undefined;
  if (v.peer !== undefined) {
    if (!(PEERS as readonly string[]).includes(v.peer)) throw new UsageError(`--peer takes ${PEERS.join(', ')}; got "${v.peer}"`);
    for (const flag of ['only', 'backends', 'clusters', 'objects', 'pvs', 'fleet-clusters', 'fleet-claims', 'fleet-backends', 'faults', 'rest-clusters', 'rest-backends', 'rest-scale'] as const) {
      if (v[flag] !== undefined) throw new UsageError(`--${flag} is not implemented with --peer (the peer run is its own scenario)`);
    }
    peer = v.peer as PeerName;
    const command = ['npx tsx bench/run.ts', `--peer ${peer}`, `--n ${n}`, `--time-scale ${timeScale}`, `--seed ${seed}`];
    if (v.timeout !== undefined) command.push(`--timeout ${timeoutSeconds}`);
    return { n, timeScale, only, quick, seed, objects, timeoutSeconds, backends, clusters, pvs, fleet, rest, peer, command: command.join(' ') };
  }

  if (only.includes('b') && only.includes('e') && v.n === undefined) {
    throw new UsageError('--only b,e: --n sizes both (b) and (e), whose defaults differ (1000, 5000); give --n, or run them apart');
  }
  const command = ['npx tsx bench/run.ts', `--n ${only.includes('e') ? rest.n : n}`, `--time-scale ${timeScale}`, `--only ${only.join(',')}`, `--seed ${seed}`];
  if (only.includes('c')) command.push(`--objects ${objects}`);
  if (v.timeout !== undefined) command.push(`--timeout ${timeoutSeconds}`);
  if (backends !== 1) command.push(`--backends ${backends}`);
  if (clusters !== 1) command.push(`--clusters ${clusters}`);
  if (only.includes('report')) command.push(`--pvs ${pvs}`);
  if (only.includes('d')) command.push(`--fleet-clusters ${fleet.clusters} --fleet-claims ${fleet.claims} --fleet-backends ${fleet.backends} --faults ${fleet.faults}`);
  if (only.includes('e')) command.push(`--rest-clusters ${rest.clusters} --rest-backends ${rest.backends} --rest-scale ${rest.restScale}`);
  return { n, timeScale, only, quick, seed, objects, timeoutSeconds, backends, clusters, pvs, fleet, rest, command: command.join(' ') };
}

function number(flag: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new UsageError(`${flag} must be a number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function integer(flag: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  const value = number(flag, raw, fallback, min, max);
  if (!Number.isInteger(value)) throw new UsageError(`${flag} must be a whole number, got "${raw}"`);
  return value;
}

function faultRuns(raw: string | undefined): FaultRuns {
  if (raw === undefined) return 'both';
  if (raw === 'both' || raw === 'on' || raw === 'off') return raw;
  throw new UsageError(`--faults takes both, on or off; got "${raw}"`);
}

function scenarios(raw: string | undefined): Scenario[] {
  if (raw === undefined) return [...DEFAULT_SCENARIOS];
  const picked = raw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  const unknown = picked.filter((s) => !(SCENARIOS as readonly string[]).includes(s));
  if (picked.length === 0 || unknown.length > 0) {
    throw new UsageError(`--only takes a comma-separated list of a, b, c, d, e, report; got "${raw}"`);
  }
  return SCENARIOS.filter((s) => picked.includes(s));
}
