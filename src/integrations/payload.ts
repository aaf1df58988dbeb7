// What an integration works with: the request (body, headers, parameters) and
// small readers that turn a missing or mistyped field into a clear 400.

import { ApiError, badRequest } from '../http/errors.ts';

export interface WebhookRequest {
  /** The body as sent. */
  body: string;
  contentType: string;
  header(name: string): string | undefined;
  /** A URL (or form) parameter. */
  param(name: string): string | undefined;
}

/** A message an integration posts; `topic` may be replaced by the URL's `topic`. */
export interface WebhookMessage {
  topic: string;
  content: string;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The body as a JSON object (whatever the declared content type, as the reference reads it). */
export function jsonBody(req: WebhookRequest): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(req.body);
  } catch {
    throw badRequest('Malformed JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('Malformed payload');
  return value as JsonObject;
}

const malformed = (path: string, what: string) => badRequest(`Malformed payload: ${path} ${what}`);

/** The value at `path` (keys and indexes), or an error naming what is missing. */
export function at(root: Json | undefined, ...path: (string | number)[]): Json {
  let value: Json | undefined = root;
  for (const [i, key] of path.entries()) {
    if (value === null || typeof value !== 'object' || !(key in value)) throw malformed(pathText(path.slice(0, i + 1)), 'is missing');
    value = (value as Record<string, Json>)[key as string];
  }
  return value as Json;
}

export function str(root: Json | undefined, ...path: (string | number)[]): string {
  const value = at(root, ...path);
  if (typeof value !== 'string') throw malformed(pathText(path), 'is not a string');
  return value;
}

export function num(root: Json | undefined, ...path: (string | number)[]): number {
  const value = at(root, ...path);
  if (typeof value !== 'number') throw malformed(pathText(path), 'is not a number');
  return value;
}

export function list(root: Json | undefined, ...path: (string | number)[]): Json[] {
  const value = at(root, ...path);
  if (!Array.isArray(value)) throw malformed(pathText(path), 'is not a list');
  return value;
}

export function obj(root: Json | undefined, ...path: (string | number)[]): JsonObject {
  const value = at(root, ...path);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw malformed(pathText(path), 'is not an object');
  return value;
}

/** A field that may be absent or null. */
export function maybe(root: Json | undefined, key: string): Json | undefined {
  if (root === null || typeof root !== 'object' || Array.isArray(root)) return undefined;
  const value = root[key];
  return value === null ? undefined : value;
}

const pathText = (path: (string | number)[]) => 'payload' + path.map((k) => (typeof k === 'number' ? `[${k}]` : `["${k}"]`)).join('');

/** The reference's UnsupportedWebhookEventTypeError. */
export function unsupportedEvent(integration: string, eventType: string): ApiError {
  return new ApiError('UNSUPPORTED_WEBHOOK_EVENT_TYPE', `The '${eventType}' event isn't currently supported by the ${integration} webhook; ignoring`, {
    data: { webhook_name: integration, event_type: eventType },
  });
}

/** The event type a service names in a header (GitHub, GitLab). */
export function eventHeader(req: WebhookRequest, header: string): string {
  const value = req.header(header);
  if (!value) throw new ApiError('MISSING_HTTP_EVENT_HEADER', `Missing the HTTP event header '${header}'`, { data: { header } });
  return value;
}
