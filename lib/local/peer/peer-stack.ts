/**
 * The local stack with the reference EBS CSI controller stack in volhook's place: the EC2
 * simulator, the real control plane and its node agents (startLocalStack with `kube`), with
 * volhook's forwarder NOT started — so volhook serves nothing in this cluster; its backend
 * is up but idle, nothing signs to it — and the peer (ebs-csi.ts) given a key the simulator
 * holds to AmazonEBSCSIDriverPolicy and the plane's administrator kubeconfig.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ebsCsiDriverPrincipal } from '../ec2/index.js';
import { startLocalStack, type RealLocalStack, type RealStackOptions } from '../stack/index.js';
import { startEbsCsiPeer, type EbsCsiPeer } from './ebs-csi.js';

/** The driver's access key in the simulator; its secret is not checked by the simulator. */
export const EBS_CSI_DRIVER_KEY = { accessKeyId: 'AKIAEBSCSIDRIVER0001', secretAccessKey: 'ebs-csi-driver-local' } as const;

export interface PeerStackOptions extends Omit<RealStackOptions, 'forwarder' | 'ec2Endpoint'> {
  /** tools/ebs-csi/bin */
  binDir: string;
  /** The peer's socket, kubeconfig and logs; a temporary directory (removed on stop) by default. */
  peerDir?: string;
}

export interface PeerStack {
  stack: RealLocalStack;
  peer: EbsCsiPeer;
  stop(): Promise<void>;
}

/**
 * The driver's controller stack on a stack already running (a cluster handed back to it, say):
 * the simulator holds the driver's key to AmazonEBSCSIDriverPolicy, the sidecars use the
 * plane's administrator kubeconfig. volhook's forwarder must not be running.
 */
export async function startPeerOn(stack: RealLocalStack, options: { binDir: string; dir: string; snapshotController?: boolean }): Promise<EbsCsiPeer> {
  const simulator = stack.simulator;
  if (!simulator) throw new Error('the peer stack needs the in-process EC2 simulator');
  if (stack.forwarder()) throw new Error("volhook's forwarder runs in this cluster: the driver's controller and volhook must never serve one cluster at once");
  simulator.addPrincipal(EBS_CSI_DRIVER_KEY.accessKeyId, ebsCsiDriverPrincipal());
  return startEbsCsiPeer({
    binDir: options.binDir,
    dir: options.dir,
    ec2Endpoint: stack.urls.ec2,
    region: stack.region,
    credentials: EBS_CSI_DRIVER_KEY,
    kubeconfig: stack.kubeconfig,
    ...(options.snapshotController !== undefined && { snapshotController: options.snapshotController }),
  });
}

export async function startPeerStack(options: PeerStackOptions): Promise<PeerStack> {
  const { binDir, peerDir, ...stackOptions } = options;
  const stack = await startLocalStack({ ...stackOptions, forwarder: false });
  let removeDir: (() => Promise<void>) | undefined;
  try {
    let dir = peerDir;
    if (!dir) {
      const made = await mkdtemp(join(tmpdir(), 'volhook-ebs-csi-'));
      removeDir = () => rm(made, { recursive: true, force: true });
      dir = made;
    }
    const peer = await startPeerOn(stack, { binDir, dir });
    return {
      stack,
      peer,
      async stop() {
        await peer.stop();
        await stack.stop();
        await removeDir?.();
      },
    };
  } catch (err) {
    await stack.stop();
    await removeDir?.();
    throw err;
  }
}
