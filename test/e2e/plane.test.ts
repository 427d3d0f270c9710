/**
 * The plane fixture's choice (test/e2e/support/plane.ts) and CI's refusal to run the real-plane
 * steps without Go (.ci/run): a plane not named is the simulated one, an unknown one is refused,
 * and a machine without Go fails, saying why, instead of skipping.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { onPlane, PLANE_VARIABLE, selectedPlane } from './support/plane.js';

describe('the plane the e2e suite runs on', () => {
  it('VOLHOOK_E2E_PLANE unset or "simulated" -> simulated; "real" -> real; anything else -> refused, named', () => {
    expect(selectedPlane({})).toBe('simulated');
    expect(selectedPlane({ [PLANE_VARIABLE]: 'simulated' })).toBe('simulated');
    expect(selectedPlane({ [PLANE_VARIABLE]: 'real' })).toBe('real');
    expect(() => selectedPlane({ [PLANE_VARIABLE]: 'kind' })).toThrow('VOLHOOK_E2E_PLANE=kind: not a plane');
    expect(onPlane({ simulated: 0, real: 2 }, 'real')).toBe(2);
    expect(onPlane({ simulated: 0, real: 2 }, 'simulated')).toBe(0);
  });
});

describe('.ci/run without Go', () => {
  const script = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8');
  const guard = script.slice(script.indexOf('if ! command -v go'), script.indexOf('fi\n', script.indexOf('if ! command -v go')) + 2);

  it('the Go check comes before the real-plane steps', () => {
    expect(guard).toContain('command -v go');
    expect(script.indexOf(guard)).toBeLessThan(script.indexOf('npm run kube:build'));
    for (const step of ['npm run test:real-plane', 'npm run test:e2e:real', 'npm run test:peer']) expect(script.indexOf(step)).toBeGreaterThan(script.indexOf(guard));
  });

  it('no go on the PATH -> exit 1 with the reason; with go (the control) -> passes', () => {
    const bash = execFileSync('bash', ['-c', 'command -v bash'], { encoding: 'utf8' }).trim();
    // No rc file either: one could put go back on the PATH.
    const without = spawnSync(bash, ['--norc', '--noprofile', '-c', guard], { env: { PATH: '/nonexistent', HOME: '/nonexistent' }, encoding: 'utf8' });
    expect(without.status).toBe(1);
    expect(without.stderr).toContain('there is no go on the PATH');
    const withGo = spawnSync(bash, ['--norc', '--noprofile', '-c', `${guard}\necho go found`], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent' }, encoding: 'utf8' });
    expect(withGo.status, withGo.stderr).toBe(0);
    expect(withGo.stdout).toContain('go found');
  });
});
