/**
 * The local stack's listening ports: which of its servers could not bind, said in words the
 * caller can map to its own settings (`npm start` names the environment variable that moves
 * each; lib/local/stack knows no environment).
 */

/** The servers of the local stack, each on a port of its own. */
export const STACK_SERVERS = ['backend', 'ec2', 'kube', 'forwarder'] as const;
export type StackServer = (typeof STACK_SERVERS)[number];

/** A server of the stack could not listen: its port is taken by another process. */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  constructor(
    readonly server: StackServer,
    readonly port: number,
    readonly host: string,
    options?: { cause?: unknown },
  ) {
    super(`the ${server} cannot listen on ${host}:${port}: the port is in use`, options);
  }
}

/** Whether `err` is Node's "address already in use" from a listen. */
export function isAddressInUse(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'EADDRINUSE';
}

/**
 * Runs `start` (which listens on `port`), turning an EADDRINUSE from it into a
 * PortInUseError naming `server`; any other failure passes unchanged.
 */
export async function listeningAs<T>(server: StackServer, host: string, port: number, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (isAddressInUse(err)) throw new PortInUseError(server, port, host, { cause: err });
    throw err;
  }
}
