/** What the local stack may tune; everything has a default that mirrors an EBS cluster. */
export interface ControllerOptions {
  /**
   * The CSI provisioner in-tree `kubernetes.io/aws-ebs` StorageClasses migrate to (CSI
   * migration), so existing classes reach volhook. Classes naming a CSI provisioner
   * directly are annotated with that name, whatever it is. Default `ebs.csi.aws.com`.
   */
  provisioner?: string;
  /**
   * The CSI driver whose PVs the attach/detach controller attaches (VolumeAttachment
   * `spec.attacher`) and whose VolumeAttachments it deletes when unused. Default `ebs.csi.aws.com`.
   */
  driver?: string;
  /** How often every object is looked at again without an event. Default 1000 ms. */
  resyncIntervalMs?: number;
  /** Told about unexpected sync errors (races such as Conflict are retried silently). Default: `console.warn`. */
  onError?: (error: unknown, context: { controller: string; key: string }) => void;
}

export type ResolvedOptions = Required<ControllerOptions>;

export function resolveOptions(options: ControllerOptions = {}): ResolvedOptions {
  return {
    provisioner: options.provisioner ?? 'ebs.csi.aws.com',
    driver: options.driver ?? 'ebs.csi.aws.com',
    resyncIntervalMs: options.resyncIntervalMs ?? 1000,
    onError:
      options.onError ??
      ((error, { controller, key }) => console.warn(`[${controller}] sync ${key} failed:`, error)),
  };
}
