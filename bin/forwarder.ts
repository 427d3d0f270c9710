/**
 * The forwarder's entry point: the image's bundle (`forwarder.mjs`, started by the Dockerfile's
 * CMD) in a cluster, `tsx bin/forwarder.ts` locally. Configured by `VOLHOOK_*` environment
 * variables (see lib/forwarder/config.ts).
 */
import { ConfigError, configFromEnv, createJsonLogger, retiredSettings, startForwarder } from '../lib/forwarder/index.js';
import { kubeAccessFor } from '../lib/forwarder/kube/source.js';

async function main(): Promise<void> {
  let config;
  try {
    config = configFromEnv(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`volhook forwarder: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createJsonLogger({ level: config.logLevel });
  for (const { name, why } of retiredSettings(process.env)) logger.warn(`${name} is ignored`, { why });

  // VOLHOOK_KUBE_SERVER, KUBECONFIG, ~/.kube/config, or the in-cluster ServiceAccount.
  const kubeAccess = await kubeAccessFor(config.kubeServer);
  const forwarder = await startForwarder(config, { kubeAccess, logger });

  let exiting = false;
  const exit = (signal: NodeJS.Signals) => {
    if (exiting) return;
    exiting = true;
    logger.info('shutting down', { signal });
    forwarder.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('unclean shutdown', { err });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', exit);
  process.on('SIGINT', exit);
}

main().catch((err: unknown) => {
  process.stderr.write(`volhook forwarder: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
