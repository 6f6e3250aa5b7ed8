import { LogController } from 'fastify';

/**
 * Fastify's internal log lines, minus the per-request ones that `RequestLogMiddleware` replaces.
 * Pass it as `Fastify({ logger: setupLogging(…), logController: new CoreLogController() })`.
 *
 * Why not `disableRequestLogging: true`: that option is deprecated since Fastify 5.12 and also silences
 * Fastify's error lines (a 500 from the default error handler, stream errors), which we want to keep.
 * Those go through `setupLogging`'s `req` serializer, so they carry no query string.
 */
export class CoreLogController extends LogController {
  /** Replaced by `RequestLogMiddleware`'s single line. */
  override incomingRequest(): void {}

  /** Replaced by `RequestLogMiddleware`'s single line (which has the status code). */
  override requestCompleted(): void {}

  /** Fastify's version logs the raw URL, query string included; the request line already says 404. */
  override routeNotFound(): void {}
}
