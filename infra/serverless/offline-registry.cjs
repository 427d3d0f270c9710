'use strict';
/**
 * `npm run offline` with no registrations file (VOLHOOK_REGISTRY_FILE, default
 * .volhook/clusters.json): a warning at start naming the file and the command that creates it,
 * the words the backend answers every reconcile with meanwhile (503 registry_missing; they come
 * from lib/registry/file-registry.ts, loaded through tsx). Offline still starts: `cluster add`
 * may run while it does, and the file is read at each request.
 */
const { existsSync } = require('node:fs');
const { pathToFileURL } = require('node:url');
const { join, resolve } = require('node:path');

class OfflineRegistry {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      'before:offline:start:init': () => this.warn(),
    };
  }

  async warn() {
    const path = (this.serverless.service.provider.environment || {}).VOLHOOK_REGISTRY_FILE;
    if (typeof path !== 'string' || path === '') return;
    const root = this.serverless.serviceDir || process.cwd();
    if (existsSync(resolve(root, path))) return;
    const { tsImport } = await import('tsx/esm/api');
    const { registryMissingMessage } = await tsImport(pathToFileURL(join(root, 'lib/registry/file-registry.ts')).href, pathToFileURL(__filename).href);
    process.stderr.write(`\nWARNING: ${registryMissingMessage(path)}\n(until then every reconcile request is answered 503 registry_missing)\n\n`);
  }
}

module.exports = OfflineRegistry;
