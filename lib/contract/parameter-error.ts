/**
 * A StorageClass (or PVC) that cannot become a volume. Thrown before anything is sent to EC2,
 * so a wrong class fails fast with a message the user can act on, instead of a late and vaguer
 * EC2 `InvalidParameterValue`.
 *
 * `parameter` is the key as written in the StorageClass (`iops`, `tagSpecification_2`,
 * `csi.storage.k8s.io/fstype`, an unknown key verbatim), or the PVC field at fault
 * (`storage` for `spec.resources.requests.storage`, `accessModes`). The message starts with
 * that name and says what is wrong, ready for a ProvisioningFailed event.
 */
export class ParameterError extends Error {
  override readonly name = 'ParameterError';
  readonly parameter: string;

  constructor(parameter: string, problem: string) {
    super(`${parameter}: ${problem}`);
    this.parameter = parameter;
  }
}
