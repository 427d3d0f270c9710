/** `npm run monitoring`: writes infra/monitoring.json from lib/observability/monitoring.ts (the dashboard and alarms serverless.yml includes). */
import { writeFileSync } from 'node:fs';
import { monitoringJson } from '../lib/observability/monitoring.js';

const path = new URL('../infra/monitoring.json', import.meta.url);
writeFileSync(path, monitoringJson());
console.log(`wrote ${path.pathname}`);
