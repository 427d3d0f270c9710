/**
 * A cluster's id, as the registry accepts it and the forwarder is configured with: one rule for
 * both sides, so a forwarder never starts with an id the backend refuses.
 */
import * as z from 'zod/mini';
import { deferred } from './deferred.js';

export const ClusterIdSchema = deferred(() => z
  .string()
  .check(z.regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, 'a cluster id is 1–63 lower-case letters, digits or dashes')));
