/**
 * One error type for every refusal the API makes. Each carries the HTTP status and a code;
 * the app's single error handler turns it into `{ error: { code, message } }` and anything
 * else into a 500 that reveals nothing.
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { $ZodError, prettifyError } from 'zod/v4/core';
import { CONTRACT_REFUSAL_STATUS, type ContractRefusal, type ErrorResponse } from '../contract/index.js';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  toBody(): ErrorResponse {
    return { error: { code: this.code, message: this.message } };
  }

  /** Response headers beside the body. */
  headers(): Record<string, string> {
    return {};
  }
}

/**
 * A contract the backend does not serve (lib/contract/version.ts): 426 with the refusal, which
 * names both sides' contracts and versions and what to upgrade. `Upgrade` lists the contracts
 * served, as RFC 9110 asks of a 426; proxies may drop it (it is hop-by-hop), the body is what
 * forwarders read.
 */
export class ContractRefusedError extends ApiError {
  constructor(readonly refusal: ContractRefusal) {
    super(CONTRACT_REFUSAL_STATUS, refusal.error.code, refusal.error.message);
  }

  override toBody(): ContractRefusal {
    return this.refusal;
  }

  override headers(): Record<string, string> {
    return { upgrade: this.refusal.contract.served.map((n) => `volhook-contract/${n}`).join(', ') };
  }
}

/**
 * A request body the contract refuses: 422 with zod's own account of what is wrong and where
 * (`✖ message → at items[0].pvc.metadata.uid`), the first `max` issues only, so that one bad
 * batch cannot make a huge answer.
 */
export function invalidRequest(error: $ZodError, max = 5): ApiError {
  const shown = error.issues.length > max ? new $ZodError(error.issues.slice(0, max)) : error;
  const more = error.issues.length > max ? `\n(and ${error.issues.length - max} more)` : '';
  return new ApiError(422, 'invalid_request', prettifyError(shown) + more);
}
