import type { Ec2Gateway } from '../ec2/types.js';
import type { ClusterRegistration } from '../registry/registration.js';
import type { ReportStore } from '../reports/store.js';
import { DeviceAllocator } from './device-names.js';

/** What reconciling one request of one cluster needs; built by the app per request. */
export interface ReconcileContext {
  clusterId: string;
  registration: ClusterRegistration;
  ec2: Ec2Gateway;
  /** The CSI driver named in PVs and VolumeAttachments: `ebs.csi.aws.com`. */
  driverName: string;
  /** The provisioner named by StorageClasses and PVC annotations: `ebs.csi.aws.com`. */
  provisionerName: string;
  now(): Date;
  /**
   * How much faster than AWS the EC2 the backend calls runs: a simulator at a time scale (its
   * latencies divided by it). EC2's own durations the backend waits out — how long an attach
   * may stay `attaching` — are divided by it too. 1, or absent, against AWS.
   */
  ec2TimeScale?: number;
  /**
   * How much faster than real time the cluster's forwarder resyncs (a bench's hour at rest): how
   * soon the backend asks for the next report (`reportWithinSeconds`) shrinks by it. 1, or
   * absent, deployed.
   */
  reportTimeScale?: number;
  /** When the forwarder signed the request (its `webhook-timestamp`): how stale its items may be. */
  signedAt: Date;
  /** Where the cluster's volume reports are kept for the audit; without one, reports are refused. */
  reports?: ReportStore;
  /** Told of each error of an item that is not an EC2 error (a bug): the app logs and counts it. */
  reportError?(itemKey: string, error: unknown): void;
}

/**
 * A ReconcileContext plus what the items of one request share: the device names their
 * attaches have claimed per instance, so that two attaches to one instance in the same
 * request never ask EC2 for the same name. Lives exactly as long as the request.
 */
export interface Scope extends ReconcileContext {
  devices: DeviceAllocator;
}

export function scopeFor(ctx: ReconcileContext): Scope {
  return { ...ctx, devices: new DeviceAllocator() };
}
