// The one error shape of lib/structured: a 400 InvalidArgumentError whose `param` names the request field
// (structured_outputs / response_format) when the caller knows it.
import { InvalidArgumentError } from '../engine/errors.js';

export function structuredError(message: string, param: string | null = null): InvalidArgumentError {
  return new InvalidArgumentError(message, 'invalid_argument', 400, { param });
}
