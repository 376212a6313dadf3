import { isBranded } from '../core/boundary.js';
import type { HttpStatusError } from './http-status-error.js';

export { HttpStatusError } from './http-status-error.js';

/** True for an {@link HttpStatusError} from this copy of ebb or any other (by its `code`, `'EBB_HTTP_STATUS'`). */
export function isHttpStatusError(value: unknown): value is HttpStatusError {
  return isBranded(value, 'EBB_HTTP_STATUS', 'HttpStatusError');
}
