/**
 * The forwarder's entry point: `node forwarder.mjs` in the image, `tsx bin/forwarder.ts`
 * locally. Configured by `VOLHOOK_*` environment variables (see lib/forwarder/config.ts).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError, configFromEnv, createJsonLogger, retiredSettings, startForwarder } from '../lib/forwarder/index.js';
import { kubeConfigFor } from '../lib/kube/index.js';

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

  let kubeConfig: KubeConfig;
  if (config.kubeServer) {
    kubeConfig = kubeConfigFor({ server: config.kubeServer, skipTLSVerify: true });
  } else {
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault(); // KUBECONFIG, ~/.kube/config, or the in-cluster ServiceAccount
  }

  const forwarder = await startForwarder(config, { kubeConfig, logger });

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
