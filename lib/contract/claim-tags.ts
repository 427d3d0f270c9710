/**
 * Volume tags a claim asks for with annotations (`tag.volhook.io/<key>: <value>`), and the record
 * of the last request the backend handled. The forwarder and the backend both decide from
 * these: a bound claim whose request differs from its record is sent, and the backend tags the
 * volume (only keys on the registration's `claimTagKeys`) and writes the record.
 */
import { VolhookAnnotations } from './wellknown.js';

/** A claim annotation `tag.volhook.io/<key>` asks for the volume tag `<key>`. */
export const CLAIM_TAG_ANNOTATION_PREFIX = 'tag.volhook.io/';

interface Annotated {
  metadata?: { annotations?: Record<string, string> | null } | null;
}

/** The tags the claim's annotations ask for, key → value, whether allowed or not. */
export function claimTagRequests(pvc: Annotated): Record<string, string> {
  const annotations = pvc.metadata?.annotations ?? {};
  const entries = Object.entries(annotations)
    .filter(([key]) => key.startsWith(CLAIM_TAG_ANNOTATION_PREFIX) && key.length > CLAIM_TAG_ANNOTATION_PREFIX.length)
    .map(([key, value]): [string, string] => [key.slice(CLAIM_TAG_ANNOTATION_PREFIX.length), value]);
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The record of a handled request: its tags as sorted JSON, the same text for the same request. */
export function claimTagsRecord(requests: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(requests).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/**
 * The claim asks for tags the backend has not handled: its request differs from its record. A
 * claim that asks for none and has no record has nothing to handle.
 */
export function claimTagsUnrecorded(pvc: Annotated): boolean {
  const requests = claimTagRequests(pvc);
  const record = pvc.metadata?.annotations?.[VolhookAnnotations.claimTags];
  if (record === undefined) return Object.keys(requests).length > 0;
  return record !== claimTagsRecord(requests);
}

/** How Events name the request: "tags asked for with tag.volhook.io/ annotations". */
export const TAG_ANNOTATION_NOTE = `tags asked for with ${CLAIM_TAG_ANNOTATION_PREFIX}<key> annotations`;
