import type { FastifyPluginCallback } from 'fastify';
import { fastifyPlugin } from 'fastify-plugin';
import { stripQuery } from './setup.js';

/**
 * One log line per finished request, at `info`, message `request completed`, with `method`, `path`
 * (the URL without its query string, which can carry tokens), `statusCode` and `durationMs`; the
 * request id comes from the `reqId` binding of Fastify's per-request logger. Never headers, cookies,
 * query strings or bodies.
 *
 * Create the app with `logController: new CoreLogController()` (or `disableRequestLogging: true`,
 * deprecated since Fastify 5.12 and also silencing Fastify's error lines); otherwise Fastify's own
 * "incoming request" / "request completed" lines double these.
 */
const requestLog: FastifyPluginCallback = (app, _options, done) => {
  app.addHook('onResponse', function logRequest(request, reply, next) {
    request.log.info(
      {
        method: request.method,
        path: stripQuery(request.url),
        statusCode: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
      },
      'request completed',
    );
    next();
  });
  done();
};

// fastify-plugin: the hook must apply app-wide, not only inside the registering plugin's scope.
export const RequestLogMiddleware = fastifyPlugin(requestLog, { name: 'core-request-log', fastify: '5.x' });
