export * from './types.js';
export { classifyEc2Error } from './errors.js';
export { createEc2Client, type Ec2ClientOptions } from './client.js';
export { createEc2Gateway, type Ec2GatewayOptions } from './gateway.js';
export { clientTokenFor } from './token.js';
