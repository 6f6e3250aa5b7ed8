import type { FastifyInstance, FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { BadRequestError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request body exactly as received, read once (JSON requests only). */
    rawBody?: Buffer;
  }
}

/** A request whose raw body bytes were cached when it was read: every later reader sees the same bytes. */
export type CoreRequest = FastifyRequest & { rawBody?: Buffer };

/** 1 MiB: the contract's default body limit; larger bodies get 413 PAYLOAD_TOO_LARGE. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Makes `application/json` the only body format the app accepts, with the raw bytes cached on
 * `request.rawBody`. Fastify's built-in parsers (JSON and text/plain) are removed, so any other media
 * type — including `text/plain` that happens to carry JSON — is a 415 and can never reach a handler
 * around the parse → prune → validate path. Media types match case-insensitively and ignore parameters
 * (`Application/JSON; charset=utf-8`). Prototype-poisoning keys (`__proto__`, `constructor.prototype`)
 * are refused with 400, as Fastify's own parser does.
 */
export function useCoreRequest(app: FastifyInstance, options: { bodyLimit?: number } = {}): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT },
    (request, body: Buffer, done) => {
      request.rawBody = body;
      if (body.length === 0) return done(null, undefined);
      try {
        done(null, secureJson.parse(body, undefined, { protoAction: 'error', constructorAction: 'error' }));
      } catch {
        const message = 'The body is not valid JSON.';
        done(new BadRequestError(message, [{ path: '', message, reason: 'invalid_json' }]), undefined);
      }
    },
  );
}
