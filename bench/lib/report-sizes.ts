/**
 * `--only report`: how many requests and bytes one cluster's volume report takes to reach the
 * backend, plain and gzip'd. A cluster of `pvs` PVs (each bound to a claim and attached to one of
 * 500 nodes) is read into its report by the forwarder's own code (buildVolumeReport), and the
 * report's key is sent by the forwarder's batch sender and report tracker over HTTP to the
 * backend app listening on 127.0.0.1, turn after turn as the pump would, until the backend holds
 * it (`done`). Plain: the backend's answers carry no `Accept-Encoding` (as a backend before
 * gzip'd bodies answers), so the forwarder sends as it always did; gzip: the backend as it is.
 * The check before ready teaches the forwarder either way; it is not counted. Bytes are those of
 * the request bodies on the wire.
 */
import { createHash } from 'node:crypto';
import type { V1CSINode, V1PersistentVolume, V1PersistentVolumeClaim, V1VolumeAttachment } from '@kubernetes/client-node';
import { createBackendApp } from '../../lib/app/index.js';
import { canonicalReport, ItemKeys, reportDigest, type VolumeReport } from '../../lib/contract/index.js';
import { postCheck, RequestCodings, type FetchLike } from '../../lib/forwarder/backend-client.js';
import { httpFetch } from '../../lib/forwarder/http-fetch.js';
import { silentLogger } from '../../lib/forwarder/logger.js';
import { createMetrics } from '../../lib/forwarder/metrics.js';
import { buildVolumeReport, ReportTracker } from '../../lib/forwarder/report.js';
import { createBatchSender } from '../../lib/forwarder/sender.js';
import type { KubeClients } from '../../lib/kube/clients.js';
import { startBackendServer } from '../../lib/local/stack/backend-server.js';
import { createStaticRegistry } from '../../lib/registry/index.js';
import { createMemoryReportStore } from '../../lib/reports/index.js';

const CLUSTER = 'bench-report';
const SECRET = `whsec_${Buffer.from('volhook-bench-report-signing-key').toString('base64')}`;
const DRIVER = 'ebs.csi.aws.com';
const NODES = 500;
/** Turns at most: a report sent in parts takes one per request; past this, something is wrong. */
const MAX_TURNS = 1000;

export interface ReportSizes {
  pvs: number;
  /** The report's JSON, bytes. */
  reportBytes: number;
  mode: 'plain' | 'gzip';
  /** Reconcile requests until the backend held the report. */
  requests: number;
  /** Their bodies' bytes on the wire. */
  bytes: number;
  /** Requests of those that were gzip'd. */
  gzipped: number;
}

/**
 * Hex as random as real UIDs, volume and instance ids (a hash of what it names), so that the
 * report compresses as a real one does, not as a counter's zeros would.
 */
const hex = (what: string, width: number) => createHash('sha256').update(what).digest('hex').slice(0, width);
const uid = (i: number) => {
  const h = hex(`uid-${i}`, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

/** The objects the forwarder's caches would hold for a cluster of `pvs` bound, attached PVs. */
function cluster(pvs: number) {
  const claims: V1PersistentVolumeClaim[] = [];
  const volumes: V1PersistentVolume[] = [];
  const attachments: V1VolumeAttachment[] = [];
  const nodes = new Map<string, V1CSINode>();
  for (let i = 0; i < pvs; i += 1) {
    const pvName = `pvc-${uid(i)}`;
    const namespace = `team-${i % 40}`;
    const name = `data-${i}`;
    claims.push({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace, uid: uid(i) },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'gp3', volumeName: pvName, resources: { requests: { storage: '20Gi' } } },
      status: { phase: 'Bound' },
    });
    volumes.push({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: pvName, annotations: { 'pv.kubernetes.io/provisioned-by': DRIVER } },
      spec: {
        capacity: { storage: '20Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'gp3',
        csi: { driver: DRIVER, volumeHandle: `vol-${hex(`vol-${i}`, 17)}`, fsType: 'ext4' },
        claimRef: { namespace, name, uid: uid(i) },
      },
      status: { phase: 'Bound' },
    });
    const node = `node-${i % NODES}`;
    attachments.push({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: `csi-${hex(`va-${i}`, 64)}` },
      spec: { attacher: DRIVER, nodeName: node, source: { persistentVolumeName: pvName } },
      status: { attached: true },
    });
    if (!nodes.has(node)) {
      nodes.set(node, { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: node }, spec: { drivers: [{ name: DRIVER, nodeID: `i-${hex(`node-${i % NODES}`, 17)}` }] } });
    }
  }
  return { claims: () => claims, volumes: () => volumes, attachments: () => attachments, csiNode: (name: string) => nodes.get(name), snapshotContents: () => [] };
}

/** The report of a cluster of `pvs` PVs, as the forwarder reads it. */
export function clusterReport(pvs: number): VolumeReport {
  return buildVolumeReport(cluster(pvs), { provisioner: DRIVER, driver: DRIVER });
}

/** Sends `report` until the backend holds it; plain against a backend that does not say it takes gzip. */
export async function measureReport(report: VolumeReport, pvs: number, mode: 'plain' | 'gzip'): Promise<ReportSizes> {
  const reports = createMemoryReportStore();
  const backend = createBackendApp({
    registry: createStaticRegistry([{ clusterId: CLUSTER, secrets: [SECRET], region: 'us-east-1' }]),
    reports,
    // A report calls no EC2; nothing listens here, so a call would fail loudly.
    ec2Endpoint: 'http://127.0.0.1:9',
    ec2Credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const server = await startBackendServer(backend, '127.0.0.1', 0);
  try {
    const wire = httpFetch();
    let counting = false;
    const counted = { requests: 0, bytes: 0, gzipped: 0 };
    const fetch: FetchLike = async (url, init) => {
      if (counting && url.endsWith('/reconcile')) {
        const body = init.body as string | Uint8Array;
        counted.requests += 1;
        counted.bytes += typeof body === 'string' ? Buffer.byteLength(body) : body.length;
        if (new Headers(init.headers).get('content-encoding') === 'gzip') counted.gzipped += 1;
      }
      const answer = await wire(url, init);
      if (mode === 'gzip') return answer;
      // A backend before gzip'd bodies: its answers say nothing of the codings it takes.
      const headers = new Headers(answer.headers);
      headers.delete('accept-encoding');
      return new Response(await answer.arrayBuffer(), { status: answer.status, headers });
    };
    const codings = new RequestCodings();
    const tracker = new ReportTracker({ sizing: () => (codings.gzip ? 'gzip' : 'json') });
    const apiUrl = server.url;
    if ((await postCheck({ apiUrl, clusterId: CLUSTER, secret: () => SECRET, fetch, timeoutMs: 60_000, codings })) !== 'accepted') {
      throw new Error('the bench backend did not accept the check');
    }
    const send = createBatchSender({
      config: { apiUrl, clusterId: CLUSTER, requestTimeoutMs: 60_000 },
      clients: {} as KubeClients,
      metrics: createMetrics({ queueDepth: () => 0, defaultMetrics: false }),
      logger: silentLogger,
      secret: { current: () => SECRET, reload: async () => {}, close() {} },
      fetch,
      codings: () => codings,
      signal: new AbortController().signal,
      buildItem: (key) => (key === ItemKeys.report() ? tracker.item(() => report, Date.now()) : undefined),
    });
    counting = true;
    let done = false;
    for (let turn = 0; turn < MAX_TURNS && !done; turn += 1) {
      const completion = (await send([ItemKeys.report()], new Map())).get(ItemKeys.report());
      done = completion?.type === 'done';
      tracker.answered(done);
      if (completion?.type === 'error') throw new Error(`the report's key settled as an error after ${counted.requests} requests`);
    }
    counting = false;
    const held = await reports.get(CLUSTER);
    if (!done || held?.digest !== reportDigest(canonicalReport(report))) throw new Error(`the backend does not hold the report after ${counted.requests} requests`);
    return { pvs, reportBytes: Buffer.byteLength(JSON.stringify(report)), mode, ...counted };
  } finally {
    await server.stop();
  }
}

/** The summary line of one run: `report 20000 PVs: requests N, bytes N (plain)`. */
export function reportLine(r: ReportSizes): string {
  return `report ${r.pvs} PVs: requests ${r.requests}, bytes ${r.bytes} (${r.mode})`;
}
