/**
 * The signing secret: from a mounted Secret file (re-read when it changes, so a rotated
 * Secret is picked up without a restart) or from a value given directly (local use).
 */
import { readFile } from 'node:fs/promises';
import { checkWebhookSecret, secretFingerprint } from '../contract/index.js';
import type { Logger } from './logger.js';
import { watchFiles } from './watched-files.js';

export interface SecretSource {
  current(): string;
  /** Reads the file again now (e.g. after a 401). */
  reload(): Promise<void>;
  close(): void;
}

/** Shows the secret signed with as the only 1 of `volhook_forwarder_signing_secret_info`. */
export function signingSecretMetric(gauge: { reset(): void; set(labels: { fingerprint: string }, value: number): void }): (secret: string) => void {
  return (secret) => {
    gauge.reset();
    gauge.set({ fingerprint: secretFingerprint(secret) }, 1);
  };
}

export async function openSecret(options: {
  file?: string;
  value?: string;
  pollMs: number;
  logger: Logger;
  /** Told of the secret signed with: at once, and on each change. */
  onChange?: (secret: string) => void;
}): Promise<SecretSource> {
  if (options.value !== undefined) {
    const value = options.value;
    options.onChange?.(value);
    return { current: () => value, reload: async () => {}, close() {} };
  }
  const file = options.file;
  if (!file) throw new Error('a secret file or value is required');
  const read = async () => {
    const text = (await readFile(file, 'utf8')).trim();
    if (!text) throw new Error(`secret file ${file} is empty`);
    // Refused here, so a bad file stops the start or is ignored on reload: never signed with.
    const checked = checkWebhookSecret(text);
    if ('problem' in checked) throw new Error(`secret file ${file} holds an unusable webhook secret: ${checked.problem}`);
    return text;
  };
  let secret = await read();
  options.onChange?.(secret);
  const reload = async () => {
    try {
      const next = await read();
      if (next !== secret) {
        secret = next;
        options.onChange?.(secret);
        options.logger.info('signing secret reloaded', { file, fingerprint: secretFingerprint(secret) });
      }
    } catch (err) {
      options.logger.error('cannot re-read the signing secret; keeping the previous one', { file, err });
    }
  };
  const close = watchFiles([file], options.pollMs, () => void reload());
  return { current: () => secret, reload, close };
}
