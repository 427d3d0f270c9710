/**
 * The local stack's start-up decisions: when its node instances count as running, which
 * listen failures become a PortInUseError, and what `npm start` then says.
 */
import { describe, expect, it } from 'vitest';
import { PORT_VARIABLES, PortInUseError, portInUseMessage, STACK_SERVERS } from '../../../lib/local/stack/index.js';
import { instancesVerdict } from '../../../lib/local/stack/nodes.js';
import { listeningAs } from '../../../lib/local/stack/ports.js';

const ids = ['i-1', 'i-2', 'i-3'];

describe('instancesVerdict', () => {
  it('all running -> running', () => {
    expect(instancesVerdict(ids, new Map(ids.map((id) => [id, 'running'])))).toEqual({ kind: 'running' });
  });
  it('one pending, one not yet described -> wait for both', () => {
    expect(instancesVerdict(ids, new Map([['i-1', 'running'], ['i-2', 'pending']]))).toEqual({ kind: 'wait', waitingFor: ['i-2', 'i-3'] });
  });
  it('one terminated -> failed, naming it', () => {
    const verdict = instancesVerdict(ids, new Map([['i-1', 'running'], ['i-2', 'terminated'], ['i-3', 'pending']]));
    expect(verdict).toEqual({ kind: 'failed', message: expect.stringContaining('i-2 is terminated') });
  });
});

describe('listeningAs', () => {
  it('EADDRINUSE -> PortInUseError naming the server and port', async () => {
    const inUse = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:8001'), { code: 'EADDRINUSE' });
    const err = await listeningAs('kube', '127.0.0.1', 8001, () => Promise.reject(inUse)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PortInUseError);
    expect(err).toMatchObject({ server: 'kube', port: 8001, host: '127.0.0.1' });
  });
  it('any other failure (control) -> passes unchanged', async () => {
    const denied = Object.assign(new Error('listen EACCES: permission denied 0.0.0.0:80'), { code: 'EACCES' });
    await expect(listeningAs('backend', '0.0.0.0', 80, () => Promise.reject(denied))).rejects.toBe(denied);
  });
});

describe('portInUseMessage', () => {
  it('every server of the stack -> names the variable that moves its port', () => {
    for (const server of STACK_SERVERS) {
      const message = portInUseMessage(new PortInUseError(server, 8001, '127.0.0.1'));
      expect(message).toContain(`127.0.0.1:8001`);
      expect(message).toContain(`set ${PORT_VARIABLES[server]} to another port`);
    }
  });
});
