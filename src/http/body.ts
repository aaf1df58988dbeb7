// Request bodies, whatever their encoding, become one map of raw string values
// plus any uploaded files: form-encoded (the API's own encoding), multipart
// (clients such as zulip-js send it, and uploads need it), or a JSON object
// (a convenience: non-string values are re-encoded as the JSON text the
// parameter parser expects). Any other body is ignored, as Zulip does.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { ApiError, badRequest } from './errors.ts';
import { parseJsonText } from './params.ts';

export interface UploadedFile {
  fieldname: string;
  filename: string;
  mimetype: string;
  data: Buffer;
}

export interface RequestBody {
  fields: Map<string, string>;
  files: UploadedFile[];
}

const EMPTY: RequestBody = { fields: new Map(), files: [] };

/** Installs the content-type parsers; `maxUploadBytes` bounds one uploaded file. */
export async function registerBodyParsers(app: FastifyInstance, maxUploadBytes: number): Promise<void> {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    // Django's QueryDict.get, which Zulip reads parameters with, returns the last value.
    done(null, new Map(new URLSearchParams(body as string)));
  });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, new Map());
    let value: unknown;
    try {
      value = parseJsonText(text, 'The JSON body');
    } catch (err) {
      return done(err instanceof ApiError ? err : badRequest('Malformed JSON'), undefined);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return done(null, new Map());
    const fields = new Map<string, string>();
    for (const [k, v] of Object.entries(value)) fields.set(k, typeof v === 'string' ? v : JSON.stringify(v));
    done(null, fields);
  });
  await app.register(multipart, { limits: { fileSize: maxUploadBytes, files: 20, fields: 1000 } });
  // Everything else: read and drop, rather than answering 415.
  app.addContentTypeParser('*', (_req, payload, done) => {
    payload.resume();
    payload.on('end', () => done(null, undefined));
    payload.on('error', (err) => done(err, undefined));
  });
}

/** `maxFileMib` bounds each uploaded file; a larger one is refused with the reference's words, never buffered whole. */
export async function readBody(req: FastifyRequest, maxFileMib: number): Promise<RequestBody> {
  if (req.isMultipart()) {
    const body: RequestBody = { fields: new Map(), files: [] };
    try {
      for await (const part of req.parts({ limits: { fileSize: maxFileMib * 1024 * 1024 } })) {
        if (part.type === 'file') {
          const data = await part.toBuffer();
          body.files.push({ fieldname: part.fieldname, filename: part.filename, mimetype: part.mimetype, data });
        } else {
          body.fields.set(part.fieldname, String(part.value));
        }
      }
    } catch (err) {
      if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
        throw badRequest(`Uploaded file is larger than the allowed limit of ${maxFileMib} MiB`);
      }
      // Other limits carry their own 4xx status; a body that does not parse is the client's fault.
      if ((err as { statusCode?: number }).statusCode !== undefined) throw err;
      throw badRequest('Malformed multipart body');
    }
    return body;
  }
  if (req.body instanceof Map) return { fields: req.body as Map<string, string>, files: [] };
  return EMPTY;
}
