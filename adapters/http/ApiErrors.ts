// The HTTP error envelope `{ error: { code, message, details? } }`, one class per status.
import { Schema } from "effect"
import { ErrorBody } from "./views.ts"

const fields = { error: ErrorBody }

export class BadRequest extends Schema.Error<BadRequest>("BadRequest")(fields, { httpApiStatus: 400 }) {}
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")(fields, { httpApiStatus: 401 }) {}
export class PaymentRequired extends Schema.Error<PaymentRequired>("PaymentRequired")(fields, { httpApiStatus: 402 }) {}
export class Forbidden extends Schema.Error<Forbidden>("Forbidden")(fields, { httpApiStatus: 403 }) {}
export class NotFound extends Schema.Error<NotFound>("NotFound")(fields, { httpApiStatus: 404 }) {}
export class Conflict extends Schema.Error<Conflict>("Conflict")(fields, { httpApiStatus: 409 }) {}
export class Unprocessable extends Schema.Error<Unprocessable>("Unprocessable")(fields, { httpApiStatus: 422 }) {}
export class TooManyRequests extends Schema.Error<TooManyRequests>("TooManyRequests")(fields, { httpApiStatus: 429 }) {}
export class ServiceUnavailable
  extends Schema.Error<ServiceUnavailable>("ServiceUnavailable")(fields, { httpApiStatus: 503 })
{}

export type ApiError =
  | BadRequest
  | Unauthorized
  | PaymentRequired
  | Forbidden
  | NotFound
  | Conflict
  | Unprocessable
  | TooManyRequests
  | ServiceUnavailable

export const errorBody = (code: string, message: string, details?: unknown): typeof ErrorBody.Type =>
  details === undefined ? { code, message } : { code, message, details }
