/**
 * `npm start`'s environment (bin/start.ts): the variable that moves each server's port, and
 * what to say when one cannot listen.
 */
import type { PortInUseError, StackServer } from './ports.js';

/** The variable that sets each server's port under `npm start`. */
export const PORT_VARIABLES: Readonly<Record<StackServer, string>> = {
  backend: 'VOLHOOK_BACKEND_PORT',
  ec2: 'VOLHOOK_EC2_PORT',
  kube: 'VOLHOOK_KUBE_PORT',
  forwarder: 'VOLHOOK_LOCAL_FORWARDER_PORT',
};

/** `npm start`'s default port for the forwarder's health and metrics (the others: DEFAULT_PORTS). */
export const DEFAULT_FORWARDER_PORT = 8789;

/** The lines `npm start` prints when a port is taken: which one, and the variable that moves it. */
export function portInUseMessage(err: PortInUseError): string {
  const variable = PORT_VARIABLES[err.server];
  return [
    `volhook local stack: the ${err.server} cannot listen on ${err.host}:${err.port}, another process uses that port.`,
    `Stop that process, or set ${variable} to another port (0 picks a free one), e.g. ${variable}=${err.port === 0 ? 0 : err.port + 10} npm start`,
  ].join('\n');
}
