// Each request's logger (Fastify's `req.log`): pino's child with the request id, made
// only when something logs. Request lines are off below `debug` (app.ts), so most
// requests (every long-poll) never log, and a child per request was a cost of its own.

import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type LogMethod = FastifyBaseLogger['info'];
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

class RequestLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get #log(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): string {
    return this.#log.level;
  }
  set level(level: string) {
    this.#log.level = level;
  }
  declare fatal: LogMethod;
  declare error: LogMethod;
  declare warn: LogMethod;
  declare info: LogMethod;
  declare debug: LogMethod;
  declare trace: LogMethod;
  declare silent: LogMethod;
  static {
    // On the prototype: a request's logger is one small object, with no closures of its own.
    for (const level of LEVELS) {
      Object.defineProperty(RequestLogger.prototype, level, {
        value(this: RequestLogger, ...args: Parameters<LogMethod>) {
          this.#log[level](...args);
        },
      });
    }
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: the same child as its default, made on first use. */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
