/**
 * When each claim of a burst reached each milestone, seen from the store's watch (the same
 * events every controller and the API server's watchers get, synchronously with each write):
 * the claim Bound, its VolumeAttachment `attached: true`, its pod Running.
 */
import type { KubeObject, ObjectStore } from '../../lib/local/kube/index.js';

export interface ClaimTimes {
  name: string;
  /** performance.now() of each milestone. */
  created: number;
  bound?: number;
  attached?: number;
  running?: number;
}

export interface Progress {
  bound: number;
  attached: number;
  running: number;
  /** VolumeAttachments created for the burst's volumes. */
  attachments: number;
  /** Bound and attached. */
  ready: number;
}

export class BurstTracker {
  readonly claims = new Map<string, ClaimTimes>();
  private readonly byPodName = new Map<string, ClaimTimes>();
  private readonly byVolumeName = new Map<string, ClaimTimes>();
  private readonly attachmentsSeen = new Set<string>();
  private readonly unwatch: Array<() => void>;
  private readonly progress: Progress = { bound: 0, attached: 0, running: 0, attachments: 0, ready: 0 };
  /** When the last claim became Bound and attached. */
  lastReadyAt: number | undefined;

  constructor(
    store: ObjectStore,
    private readonly namespace: string,
  ) {
    this.unwatch = [
      store.watch('persistentvolumeclaims', { namespace }, ({ object }) => this.onClaim(object)),
      store.watch('volumeattachments', {}, ({ object }) => this.onAttachment(object)),
      store.watch('pods', { namespace }, ({ object }) => this.onPod(object)),
    ];
  }

  /** Registers a claim and its pod just before they are created. */
  expect(claimName: string, podName: string): void {
    const times: ClaimTimes = { name: claimName, created: performance.now() };
    this.claims.set(claimName, times);
    this.byPodName.set(podName, times);
  }

  counts(): Progress {
    return { ...this.progress };
  }

  stop(): void {
    for (const cancel of this.unwatch) cancel();
  }

  private onClaim(object: KubeObject): void {
    const times = this.claims.get(object.metadata.name);
    if (!times) return;
    const spec = object.spec as { volumeName?: string } | undefined;
    if (spec?.volumeName) this.byVolumeName.set(spec.volumeName, times);
    if (times.bound === undefined && (object.status as { phase?: string } | undefined)?.phase === 'Bound') {
      times.bound = performance.now();
      this.progress.bound++;
      this.checkReady(times);
    }
  }

  private onAttachment(object: KubeObject): void {
    const source = (object.spec as { source?: { persistentVolumeName?: string } } | undefined)?.source;
    const times = source?.persistentVolumeName ? this.byVolumeName.get(source.persistentVolumeName) : undefined;
    if (!times) return;
    if (!this.attachmentsSeen.has(object.metadata.name)) {
      this.attachmentsSeen.add(object.metadata.name);
      this.progress.attachments++;
    }
    if (times.attached !== undefined) return;
    if ((object.status as { attached?: boolean } | undefined)?.attached === true) {
      times.attached = performance.now();
      this.progress.attached++;
      this.checkReady(times);
    }
  }

  private onPod(object: KubeObject): void {
    const times = this.byPodName.get(object.metadata.name);
    if (!times || times.running !== undefined) return;
    if ((object.status as { phase?: string } | undefined)?.phase === 'Running') {
      times.running = performance.now();
      this.progress.running++;
    }
  }

  private checkReady(times: ClaimTimes): void {
    if (times.bound === undefined || times.attached === undefined) return;
    this.progress.ready++;
    this.lastReadyAt = Math.max(this.lastReadyAt ?? 0, times.bound, times.attached);
  }
}
