/**
 * The signing secret: from a mounted Secret file (re-read when it changes, so a rotated
 * Secret is picked up without a restart) or from a value given directly (local use).
 */
import { readFile } from 'node:fs/promises';
import { checkWebhookSecret } from '../contract/index.js';
import type { Logger } from './logger.js';
import { watchFiles } from './watched-files.js';

export interface SecretSource {
  current(): string;
  /** Reads the file again now (e.g. after a 401). */
  reload(): Promise<void>;
  close(): void;
}

export async function openSecret(options: {
  file?: string;
  value?: string;
  pollMs: number;
  logger: Logger;
}): Promise<SecretSource> {
  if (options.value !== undefined) {
    const value = options.value;
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
  const reload = async () => {
    try {
      const next = await read();
      if (next !== secret) {
        secret = next;
        options.logger.info('signing secret reloaded', { file });
      }
    } catch (err) {
      options.logger.error('cannot re-read the signing secret; keeping the previous one', { file, err });
    }
  };
  const close = watchFiles([file], options.pollMs, () => void reload());
  return { current: () => secret, reload, close };
}
