/**
 * Errors as the real API server words them. Controllers branch on `reason` (never on the
 * message), so reasons and codes follow `k8s.io/apimachinery/pkg/api/errors` exactly.
 */

export type StatusReason =
  | 'BadRequest'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'Gone'
  | 'Expired'
  | 'Forbidden'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'InternalError';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
}

/** The `metav1.Status` body every error response carries (also used for Success on delete). */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

const CODES: Record<StatusReason, number> = {
  BadRequest: 400,
  NotFound: 404,
  AlreadyExists: 409,
  Conflict: 409,
  Invalid: 422,
  Gone: 410,
  Expired: 410,
  Forbidden: 403,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  UnsupportedMediaType: 415,
  InternalError: 500,
};

/**
 * Thrown by the store and turned into a `Status` response by the server, so an in-process
 * controller sees the same reason and code a client-node caller gets from `ApiException`.
 */
export class KubeApiError extends Error {
  readonly code: number;

  constructor(
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'KubeApiError';
    this.code = CODES[reason];
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** The group-qualified resource as it appears in messages: `storageclasses.storage.k8s.io`. */
export interface GroupResource {
  resource: string;
  group: string;
}

function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function resourceDetails(gr: GroupResource, name: string): StatusDetails {
  return gr.group ? { name, group: gr.group, kind: gr.resource } : { name, kind: gr.resource };
}

export function notFound(gr: GroupResource, name: string): KubeApiError {
  return new KubeApiError('NotFound', `${qualified(gr)} "${name}" not found`, resourceDetails(gr, name));
}

export function alreadyExists(gr: GroupResource, name: string): KubeApiError {
  return new KubeApiError('AlreadyExists', `${qualified(gr)} "${name}" already exists`, resourceDetails(gr, name));
}

/** `why` defaults to the optimistic-concurrency wording client-go's retry helpers expect. */
export function conflict(gr: GroupResource, name: string, why?: string): KubeApiError {
  const reason = why ?? 'the object has been modified; please apply your changes to the latest version and try again';
  return new KubeApiError('Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${reason}`, resourceDetails(gr, name));
}

/** One field error of an Invalid response, e.g. `{ field: 'spec.accessModes', type: 'Required', detail: '…' }`. */
export interface FieldError {
  field: string;
  type: 'Required' | 'Invalid' | 'Forbidden' | 'NotSupported' | 'Duplicate' | 'TooLong';
  detail: string;
  value?: unknown;
  /** The value as Go prints it where that is not JSON (`[]string{"x"}`), used instead of `value`. */
  valueText?: string;
}

const CAUSE_REASON: Record<FieldError['type'], string> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  Forbidden: 'FieldValueForbidden',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  TooLong: 'FieldValueTooLong',
};

const TYPE_TEXT: Record<FieldError['type'], string> = {
  Required: 'Required value',
  Invalid: 'Invalid value',
  Forbidden: 'Forbidden',
  NotSupported: 'Unsupported value',
  Duplicate: 'Duplicate value',
  TooLong: 'Too long',
};

/** `field.Error.ErrorBody()`: Required, Forbidden and TooLong never echo the value. */
function fieldErrorText(e: FieldError): string {
  const showValue = (e.value !== undefined || e.valueText !== undefined) && e.type !== 'Required' && e.type !== 'Forbidden' && e.type !== 'TooLong';
  const head = showValue ? `${TYPE_TEXT[e.type]}: ${e.valueText ?? JSON.stringify(e.value)}` : TYPE_TEXT[e.type];
  return e.detail ? `${head}: ${e.detail}` : head;
}

/** 422 Invalid. `qualified` is the kind as the message names it (`PatchOptions.meta.k8s.io`); default `kind`. */
export function invalid(kind: string, group: string, name: string, errors: FieldError[], qualified = kind): KubeApiError {
  const texts = errors.map((e) => `${e.field}: ${fieldErrorText(e)}`);
  const summary = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  const details: StatusDetails = { name, kind, causes: errors.map((e) => ({ reason: CAUSE_REASON[e.type], message: fieldErrorText(e), field: e.field })) };
  if (group) details.group = group;
  if (!kind) delete details.kind;
  if (!name) delete details.name;
  return new KubeApiError('Invalid', `${qualified} "${name}" is invalid: ${summary}`, details);
}

export function badRequest(message: string): KubeApiError {
  return new KubeApiError('BadRequest', message);
}

export function forbidden(message: string, details?: StatusDetails): KubeApiError {
  return new KubeApiError('Forbidden', message, details);
}

/** What a watch from a compacted resourceVersion ends with (reason Expired, code 410). */
export function expired(message: string): KubeApiError {
  return new KubeApiError('Expired', message);
}

/**
 * The reason of an error from this store, from client-node (`ApiException`, whose body is a
 * Status, possibly as a JSON string), or a `Status` object; undefined for anything else.
 */
export function reasonOf(err: unknown): string | undefined {
  if (err instanceof KubeApiError) return err.reason;
  if (typeof err !== 'object' || err === null) return undefined;
  const record = err as { reason?: unknown; body?: unknown; code?: unknown };
  if (typeof record.reason === 'string') return record.reason;
  let body = record.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      body = undefined;
    }
  }
  if (typeof body === 'object' && body !== null && typeof (body as { reason?: unknown }).reason === 'string') {
    return (body as { reason: string }).reason;
  }
  return undefined;
}

function codeOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown; statusCode?: unknown }).code ?? (err as { statusCode?: unknown }).statusCode;
  return typeof code === 'number' ? code : undefined;
}

export function isNotFound(err: unknown): boolean {
  return reasonOf(err) === 'NotFound' || (reasonOf(err) === undefined && codeOf(err) === 404);
}

export function isAlreadyExists(err: unknown): boolean {
  return reasonOf(err) === 'AlreadyExists';
}

/** A stale resourceVersion or a failed precondition: re-read and try again. */
export function isConflict(err: unknown): boolean {
  return reasonOf(err) === 'Conflict';
}

export function isInvalid(err: unknown): boolean {
  return reasonOf(err) === 'Invalid' || (reasonOf(err) === undefined && codeOf(err) === 422);
}

/** 410 (Expired or Gone): the resourceVersion is no longer retained; relist. */
export function isGone(err: unknown): boolean {
  const reason = reasonOf(err);
  return reason === 'Expired' || reason === 'Gone' || (reason === undefined && codeOf(err) === 410);
}
