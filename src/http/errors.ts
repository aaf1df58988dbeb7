// The one table of error codes and their HTTP statuses (reference digest section 5).
// Every error the API returns is an ApiError; routes and actions throw, the
// dispatcher turns it into {"result":"error","msg":...,"code":...,<data>}.

export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  REQUEST_VARIABLE_MISSING: 400,
  REQUEST_VARIABLE_INVALID: 400,
  REQUEST_CONFUSING_VAR: 400,
  INVALID_JSON: 400,
  BAD_IMAGE: 400,
  REALM_UPLOAD_QUOTA: 400,
  BAD_NARROW: 400,
  CANNOT_DEACTIVATE_LAST_USER: 400,
  STREAM_DOES_NOT_EXIST: 400,
  UNAUTHORIZED_PRINCIPAL: 400,
  BAD_EVENT_QUEUE_ID: 400,
  INVITATION_FAILED: 400,
  MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: 400,
  REACTION_ALREADY_EXISTS: 400,
  REACTION_DOES_NOT_EXIST: 400,
  TOPIC_WILDCARD_MENTION_NOT_ALLOWED: 400,
  STREAM_WILDCARD_MENTION_NOT_ALLOWED: 400,
  EXPECTATION_MISMATCH: 400,
  SYSTEM_GROUP_REQUIRED: 400,
  CANNOT_DEACTIVATE_GROUP_IN_USE: 400,
  CANNOT_ADMINISTER_CHANNEL: 400,
  PUSH_SERVICE_NOT_CONFIGURED: 400,
  INVALID_BOUNCER_PUBLIC_KEY: 400,
  REQUEST_EXPIRED: 400,
  INVALID_PUSH_DEVICE_TOKEN: 400,
  PUSH_NOTIFICATIONS_DISALLOWED: 400,
  REQUEST_TIMEOUT: 400,
  UNSUPPORTED_WEBHOOK_EVENT_TYPE: 400,
  MISSING_HTTP_EVENT_HEADER: 400,
  UNAUTHORIZED: 401,
  UNAUTHENTICATED_USER: 401,
  AUTHENTICATION_FAILED: 401,
  USER_DEACTIVATED: 401,
  REALM_DEACTIVATED: 401,
  PASSWORD_AUTH_DISABLED: 401,
  PASSWORD_RESET_REQUIRED: 401,
  INVALID_API_KEY: 401,
  CSRF_FAILED: 403,
  NONEXISTENT_SUBDOMAIN: 404,
  RATE_LIMIT_HIT: 429,
  SERVER_NOT_READY: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly data: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, msg: string, opts: { data?: Record<string, unknown>; status?: number; headers?: Record<string, string> } = {}) {
    super(msg);
    this.code = code;
    this.status = opts.status ?? ERROR_STATUS[code];
    this.data = opts.data ?? {};
    this.headers = opts.headers ?? {};
  }

  body(): Record<string, unknown> {
    return { result: 'error', msg: this.message, code: this.code, ...this.data };
  }
}

/** The generic 400 BAD_REQUEST: most validation and permission failures. */
export function badRequest(msg: string, data?: Record<string, unknown>): ApiError {
  return new ApiError('BAD_REQUEST', msg, { data });
}

/** 404 with code BAD_REQUEST: the resource kinds Zulip answers this way (snippets, drafts, emoji). */
export function notFound(msg: string): ApiError {
  return new ApiError('BAD_REQUEST', msg, { status: 404 });
}

export function missingArgument(name: string): ApiError {
  return new ApiError('REQUEST_VARIABLE_MISSING', `Missing '${name}' argument`, { data: { var_name: name } });
}

/** A value of the right type that the parameter cannot take (the reference's converter failure). */
export function badValue(name: string, value: unknown): ApiError {
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  return new ApiError('REQUEST_VARIABLE_INVALID', `Bad value for '${name}': ${shown}`, { data: { var_name: name, bad_value: value } });
}

export const insufficientPermission = (): ApiError => badRequest('Insufficient permission');

export const mustBeAdmin = (): ApiError => new ApiError('UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator');

export const mustBeOwner = (): ApiError => new ApiError('UNAUTHORIZED_PRINCIPAL', 'Must be an organization owner');

export const mustBeModerator = (): ApiError => new ApiError('UNAUTHORIZED_PRINCIPAL', 'Must be an organization moderator');

export const BASIC_AUTH_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="zulip"' };

export function unauthorized(msg = 'Not logged in: API authentication or user session required'): ApiError {
  return new ApiError('UNAUTHORIZED', msg, { headers: BASIC_AUTH_CHALLENGE });
}

/** The reference's human_users_only: endpoints about a person's own devices and credentials. */
export const noBotRequests = (): ApiError => badRequest('This endpoint does not accept bot requests.');
