/** `npm run docs:iam`: writes docs/deploy.md's IAM table from serverless.yml's role statements (lib/iam/policy-doc.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { withIamSection } from '../lib/iam/policy-doc.js';

const path = new URL('../docs/deploy.md', import.meta.url);
writeFileSync(path, withIamSection(readFileSync(path, 'utf8')));
console.log(`wrote ${path.pathname}`);
