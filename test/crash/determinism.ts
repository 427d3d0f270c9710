/**
 * The project's in-process parts draw identifiers from `node:crypto`: the Kubernetes store
 * its uids (and so PV names, and through them the Immediate zone choice), the EC2 simulator
 * its volume and instance IDs, the signer its webhook ids. For a seed to replay a run, those
 * must be seeded too. Node lets a test swap a builtin's export and re-sync the ESM bindings
 * (`module.syncBuiltinESMExports`); `seedNodeRandomness` does that for `randomUUID` and the
 * synchronous form of `randomBytes`, and returns the function that puts the real ones back.
 *
 * Only identifiers come from here. Nothing secret is made while it is in force: the run's
 * webhook secret is a fixed test value.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { Rng } from './rng.js';

const require = createRequire(import.meta.url);
const crypto = require('node:crypto') as typeof import('node:crypto');

let active = false;

export function seedNodeRandomness(seed: number): () => void {
  if (active) throw new Error('seedNodeRandomness is already in force');
  active = true;
  const rng = new Rng(seed ^ 0x5eed1e55);
  const realUuid = crypto.randomUUID;
  const realBytes = crypto.randomBytes;
  const bytes = (size: number): Buffer => {
    const out = Buffer.alloc(size);
    for (let i = 0; i < size; i++) out[i] = Math.floor(rng.next() * 256);
    return out;
  };
  const uuid = () => {
    const b = bytes(16);
    b[6] = ((b[6] as number) & 0x0f) | 0x40;
    b[8] = ((b[8] as number) & 0x3f) | 0x80;
    const h = b.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}` as ReturnType<typeof realUuid>;
  };
  const seededBytes = ((size: number, callback?: unknown) =>
    // The callback form (used for anything asynchronous) keeps the real source.
    typeof callback === 'function' ? (realBytes as (s: number, cb: unknown) => void)(size, callback) : bytes(size)) as typeof realBytes;
  crypto.randomUUID = uuid;
  crypto.randomBytes = seededBytes;
  syncBuiltinESMExports();
  return () => {
    crypto.randomUUID = realUuid;
    crypto.randomBytes = realBytes;
    syncBuiltinESMExports();
    active = false;
  };
}
