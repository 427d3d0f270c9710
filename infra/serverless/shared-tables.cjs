'use strict';
/**
 * Before any command runs (package, deploy, offline, info…): the shared-table params of a
 * standby (`sharedReplayTable`, `sharedBudgetTable`, as serverless.yml's `custom.sharedTables`
 * lists them once resolved) are checked, and a value that is not a table name, or is this
 * stage's own table, stops the command with a message naming the param. The rule is
 * lib/dynamodb/shared-table.ts's (loaded through tsx).
 */
const { pathToFileURL } = require('node:url');
const { join } = require('node:path');

class SharedTables {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      initialize: () => this.check(),
    };
  }

  async check() {
    const listed = (this.serverless.service.custom || {}).sharedTables;
    if (!Array.isArray(listed)) throw new this.serverless.classes.Error('serverless.yml: custom.sharedTables must list the shared-table params (infra/serverless/shared-tables.cjs)');
    const root = this.serverless.serviceDir || process.cwd();
    const { tsImport } = await import('tsx/esm/api');
    const { sharedTableRefusals } = await tsImport(pathToFileURL(join(root, 'lib/dynamodb/shared-table.ts')).href, pathToFileURL(__filename).href);
    const refusals = sharedTableRefusals(listed.map((p) => ({ param: String(p.param), value: p.value == null ? '' : String(p.value), own: p.own == null ? '' : String(p.own) })));
    if (refusals.length > 0) throw new this.serverless.classes.Error(refusals.join('\n'));
  }
}

module.exports = SharedTables;
