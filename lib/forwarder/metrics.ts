/** The forwarder's Prometheus metrics, on a registry of its own (several may share a process). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface ForwarderMetrics {
  registry: Registry;
  queueDepth: Gauge;
  requestsInFlight: Gauge;
  outcomes: Counter<'kind' | 'outcome'>;
  requestDuration: Histogram<'status'>;
  writeFailures: Counter<'op'>;
  informerRestarts: Counter<'resource'>;
  updatesIgnored: Counter<'resource'>;
  /** By backend URL: 1 for the one requests go to now, 0 for the others (failover.ts). */
  backendInUse: Gauge<'url'>;
  /** 1 while this replica sends (holds the Lease, or runs alone). */
  leader: Gauge;
  /** 1, labelled with this build's version and the contract it speaks. */
  buildInfo: Gauge<'version' | 'contract'>;
  /** 1 once the backend refused this forwarder's contract: it sends nothing more. */
  contractRefused: Gauge<'offered' | 'served' | 'upgrade'>;
  /** 1, by cause, while the backend has refused every request for longer than the event threshold. */
  backendRefused: Gauge<'cause'>;
  /** 1 for the fingerprint of the secret this replica signs with now (secretFingerprint). */
  signingSecret: Gauge<'fingerprint'>;
}

export function createMetrics(options: { queueDepth: () => number; defaultMetrics?: boolean }): ForwarderMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'volhook_forwarder_' });
  return {
    registry,
    queueDepth: new Gauge({
      name: 'volhook_forwarder_queue_depth',
      help: 'Objects queued for the backend, waiting or in flight',
      registers: [registry],
      collect() {
        this.set(options.queueDepth());
      },
    }),
    requestsInFlight: new Gauge({
      name: 'volhook_forwarder_requests_in_flight',
      help: 'Reconcile requests sent and not yet answered',
      registers: [registry],
    }),
    outcomes: new Counter({
      name: 'volhook_forwarder_outcomes_total',
      help: 'Items by kind and outcome (done, requeue, failed from the backend; error when no usable answer)',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'volhook_forwarder_request_duration_seconds',
      help: 'Reconcile request latency by HTTP status (or "error" when there was no answer)',
      labelNames: ['status'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25],
      registers: [registry],
    }),
    writeFailures: new Counter({
      name: 'volhook_forwarder_write_failures_total',
      help: 'Kubernetes writes from results that could not be applied, by write op',
      labelNames: ['op'],
      registers: [registry],
    }),
    informerRestarts: new Counter({
      name: 'volhook_forwarder_informer_restarts_total',
      help: 'Informers restarted after a watch or list error',
      labelNames: ['resource'],
      registers: [registry],
    }),
    updatesIgnored: new Counter({
      name: 'volhook_forwarder_updates_ignored_total',
      help: 'Updates not offered: only what volhook wrote changed (echoes), or a Node heartbeat',
      labelNames: ['resource'],
      registers: [registry],
    }),
    buildInfo: new Gauge({
      name: 'volhook_forwarder_build_info',
      help: "Always 1: this forwarder's version and the contract it speaks, as labels",
      labelNames: ['version', 'contract'],
      registers: [registry],
    }),
    contractRefused: new Gauge({
      name: 'volhook_forwarder_contract_refused',
      help: "1 once the backend refused the contract this forwarder speaks (offered) for those it serves: nothing is sent until the side named by upgrade is upgraded",
      labelNames: ['offered', 'served', 'upgrade'],
      registers: [registry],
    }),
    backendRefused: new Gauge({
      name: 'volhook_forwarder_backend_refused',
      help: 'Set to 1 while every request to the backend is refused (cause: signature, registration, unregistered, request, failing, unreachable, backend_unusable) past the event threshold: claims and VolumeAttachments are held back, with Warning Events',
      labelNames: ['cause'],
      registers: [registry],
    }),
    signingSecret: new Gauge({
      name: 'volhook_forwarder_signing_secret_info',
      help: 'Set to 1 for the fingerprint (sha256:<12 hex>, as cluster rotate-secret prints it) of the secret this replica signs with now; one series per replica',
      labelNames: ['fingerprint'],
      registers: [registry],
    }),
    backendInUse: new Gauge({
      name: 'volhook_forwarder_backend_in_use',
      help: 'By backend URL (VOLHOOK_API_URL, then VOLHOOK_STANDBY_API_URLS): 1 for the one requests go to now, 0 for the others',
      labelNames: ['url'],
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'volhook_forwarder_leader',
      help: '1 while this replica sends to the backend (it holds the leader Lease, or runs without leader election)',
      registers: [registry],
    }),
  };
}
