import { Agent, createServer, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { listen } from '../../lib/http/index.js';

const hello = () => createServer((_req, res) => res.end('hi'));

describe('listen', () => {
  it('port 0 on 127.0.0.1 -> a free port and its URL; the server answers there', async () => {
    const l = await listen(hello(), 0, '127.0.0.1');
    expect(l.port).toBeGreaterThan(0);
    expect(l.url).toBe(`http://127.0.0.1:${l.port}`);
    expect(await (await fetch(l.url)).text()).toBe('hi');
    await l.close();
  });

  it('an IPv6 host -> the URL has it in brackets', async () => {
    const l = await listen(hello(), 0, '::1').catch(() => undefined);
    if (!l) return; // no IPv6 loopback on this machine
    expect(l.url).toBe(`http://[::1]:${l.port}`);
    await l.close();
  });

  it('a port already bound -> rejects with EADDRINUSE', async () => {
    const first = await listen(hello(), 0, '127.0.0.1');
    await expect(listen(hello(), first.port, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await first.close();
  });

  it('close with a keep-alive connection and a request in flight -> resolves at once; closing again resolves too', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/hang') return; // never answered, as an open watch
      res.end('ok');
    });
    const l = await listen(server, 0, '127.0.0.1');
    const agent = new Agent({ keepAlive: true });
    await new Promise<void>((resolve) => request(`${l.url}/`, { agent }, (res) => res.resume().on('end', resolve)).end());
    const hanging = new Promise<string>((resolve) => request(`${l.url}/hang`, { agent }).on('error', (e) => resolve(e.message)).end());
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    await l.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await hanging).toMatch(/socket hang up|ECONNRESET/);
    await l.close();
    agent.destroy();
  });
});
