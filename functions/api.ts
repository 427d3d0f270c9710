/**
 * Lambda entry point: the same hono app the local stack serves, behind API Gateway HTTP API.
 * Built once per container so EC2 clients and registry caches live across invocations.
 */
import { handle } from 'hono/aws-lambda';
import { createBackendApp } from '../lib/app/index.js';
import { registryFromEnvironment } from '../lib/registry/index.js';

export const handler = handle(
  createBackendApp({
    registry: registryFromEnvironment(process.env),
    ec2Endpoint: process.env.AWS_ENDPOINT_URL_EC2 ?? process.env.AWS_ENDPOINT_URL,
  }),
);
