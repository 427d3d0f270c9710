/**
 * `npm run image:build [-- --repository <image> --push --platform linux/amd64,linux/arm64]`:
 * builds the forwarder image of this commit (docker buildx), tagged with the package's version,
 * and prints its digest and the chart values that pin it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { imageBuildArgs } from '../infra/forwarder/image.js';

const DEFAULT_REPOSITORY = 'ghcr.io/volhook/forwarder';

function main(): number {
  let options;
  try {
    ({ values: options } = parseArgs({
      options: {
        repository: { type: 'string', default: DEFAULT_REPOSITORY },
        push: { type: 'boolean', default: false },
        platform: { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    console.error(`image:build: ${(error as Error).message}\nusage: npm run image:build -- [--repository <image>] [--push] [--platform a,b] [--dry-run]`);
    return 2;
  }
  const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
  const sourceDateEpoch = Number(execFileSync('git', ['log', '-1', '--format=%ct'], { encoding: 'utf8' }).trim());
  const dir = mkdtempSync(join(tmpdir(), 'volhook-image-'));
  const metadataFile = join(dir, 'metadata.json');
  try {
    const args = imageBuildArgs({ repository: options.repository, version, sourceDateEpoch, push: options.push, metadataFile, ...(options.platform ? { platforms: options.platform.split(',') } : {}) });
    console.error(`docker ${args.join(' ')}`);
    if (options['dry-run']) return 0;
    const built = spawnSync('docker', args, { stdio: 'inherit' });
    if (built.error || built.status !== 0) {
      console.error(`image:build: docker buildx failed${built.error ? `: ${built.error.message}` : ` (exit ${built.status})`}`);
      return 1;
    }
    const digest = (JSON.parse(readFileSync(metadataFile, 'utf8')) as { 'containerimage.digest'?: string })['containerimage.digest'];
    console.log(`${options.repository}:${version}${digest ? `@${digest}` : ''}`);
    if (digest) console.error(`pin it in the chart: --set image.repository=${options.repository} --set image.digest=${digest}`);
    return 0;
  } catch (error) {
    console.error(`image:build: ${(error as Error).message}`);
    return 2;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = main();
