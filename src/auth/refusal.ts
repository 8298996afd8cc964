import type { ErrorCode } from '../response/errors.js';
import { errorResponse } from '../response/send-error.js';
import type { AuthOutcome } from './types.js';

export type AuthRefusal = Extract<AuthOutcome, { ok: false }>;

/** A refusal answered with a gateway error of the catalogue; `detail` goes to logs only. */
export function gatewayRefusal(code: ErrorCode, detail: string, extraHeaders?: Record<string, string>): AuthRefusal {
  return { ok: false, ...errorResponse(code, extraHeaders), code, detail };
}
