import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { CoreLogController, RequestLogMiddleware, setupLogging } from '@core/runtime';

/** A pino destination that keeps every JSON line. */
function capture() {
  const lines: string[] = [];
  return {
    lines,
    stream: { write: (line: string) => void lines.push(line) },
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const HEADER_TOKEN = 'eyHEADER.TOKEN.secret1';
const COOKIE_TOKEN = 'eyCOOKIE.TOKEN.secret2';
const QUERY_TOKEN = 'eyQUERY.TOKEN.secret3';
const BODY_SECRET = 'body-password-secret4';
const SECRETS = [HEADER_TOKEN, COOKIE_TOKEN, QUERY_TOKEN, BODY_SECRET];

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** `core`: the recommended wiring; `fastify`: Fastify's own request lines left on. */
async function buildApp(
  out: ReturnType<typeof capture>,
  controller: 'core' | 'fastify' = 'core',
): Promise<FastifyInstance> {
  const logger = setupLogging({ environment: 'production', stream: out.stream });
  const instance = Fastify(controller === 'core' ? { logger, logController: new CoreLogController() } : { logger });
  await instance.register(RequestLogMiddleware);
  instance.get('/tasks/:id', async () => ({ ok: true }));
  instance.post('/login', async () => ({ ok: true }));
  instance.get('/boom', async () => {
    throw new Error('kaput');
  });
  // A careless handler that logs whole headers: redaction must still hide the credentials.
  instance.get('/debug', async (request) => {
    request.log.info({ headers: request.headers }, 'headers dump');
    request.log.info({ upstream: { headers: { ...request.headers } } }, 'nested dump');
    request.log.info({ err: { config: { headers: { Authorization: `Bearer ${HEADER_TOKEN}` } } } }, 'client error');
    // What an HTTP client library throws: an Error carrying the request config it sent.
    const upstreamError = Object.assign(new Error('upstream said 401'), {
      config: {
        url: 'https://upstream.example/api',
        headers: { 'Proxy-Authorization': `Basic ${HEADER_TOKEN}`, accept: 'application/json' },
      },
    });
    request.log.error({ err: upstreamError }, 'upstream failed');
    request.log.info({ calls: [{ headers: { Cookie: COOKIE_TOKEN, 'x-trace': 't1' } }] }, 'batch');
    request.log.child({ headers: { authorization: `Bearer ${HEADER_TOKEN}` } }).info('child bindings');
    // The logged objects themselves are left alone: redaction works on copies.
    if (upstreamError.config.headers['Proxy-Authorization'] !== `Basic ${HEADER_TOKEN}`)
      throw new Error('redaction mutated the caller object');
    if (request.headers.authorization !== `Bearer ${HEADER_TOKEN}`)
      throw new Error('redaction mutated request.headers');
    return { ok: true };
  });
  await instance.ready();
  app = instance;
  return instance;
}

const credentials = {
  authorization: `Bearer ${HEADER_TOKEN}`,
  cookie: `theme=dark; access_token=${COOKIE_TOKEN}`,
};

describe('RequestLogMiddleware', () => {
  it('logs one line per request with method, path, status, duration and request id', async () => {
    const out = capture();
    const server = await buildApp(out);
    await server.inject({ method: 'GET', url: `/tasks/42?access_token=${QUERY_TOKEN}&x=1`, headers: credentials });
    await server.inject({ method: 'POST', url: '/login', headers: credentials, payload: { password: BODY_SECRET } });
    await server.inject({ method: 'GET', url: '/boom' });
    await server.inject({ method: 'GET', url: '/nowhere?token=abc' });

    const lines = out.records().filter((r) => r.msg === 'request completed');
    expect(lines.map(({ method, path, statusCode }) => ({ method, path, statusCode }))).toEqual([
      { method: 'GET', path: '/tasks/42', statusCode: 200 },
      { method: 'POST', path: '/login', statusCode: 200 },
      { method: 'GET', path: '/boom', statusCode: 500 },
      { method: 'GET', path: '/nowhere', statusCode: 404 },
    ]);
    for (const line of lines) {
      expect(line.level).toBe(30);
      expect(typeof line.durationMs).toBe('number');
      expect(line.durationMs as number).toBeGreaterThanOrEqual(0);
      expect(line.reqId).toEqual(expect.any(String));
      // Nothing but these fields (plus pino's own): no headers, cookies, query or body.
      expect(Object.keys(line).sort()).toEqual([
        'durationMs',
        'hostname',
        'level',
        'method',
        'msg',
        'path',
        'pid',
        'reqId',
        'statusCode',
        'time',
      ]);
    }
    expect(new Set(lines.map((l) => l.reqId)).size).toBe(4);
  });

  it("with CoreLogController: no Fastify request lines, but Fastify's error line stays", async () => {
    const out = capture();
    const server = await buildApp(out);
    await server.inject({ method: 'GET', url: `/boom?access_token=${QUERY_TOKEN}` });
    await server.inject({ method: 'GET', url: `/nowhere?access_token=${QUERY_TOKEN}` });

    const records = out.records();
    expect(records.map((r) => r.msg)).toEqual(['kaput', 'request completed', 'request completed']);
    const error = records[0] as { level: number; req: { url: string }; err: { message: string } };
    expect(error).toMatchObject({ level: 50, req: { url: '/boom' }, err: { message: 'kaput' } });
    expect(out.lines.join('')).not.toContain(QUERY_TOKEN);
  });

  it('never writes a token from the Authorization header, the cookie, the query string, or a body', async () => {
    const out = capture();
    const server = await buildApp(out);
    await server.inject({ method: 'GET', url: `/tasks/1?access_token=${QUERY_TOKEN}`, headers: credentials });
    await server.inject({
      method: 'POST',
      url: `/login?access_token=${QUERY_TOKEN}`,
      headers: credentials,
      payload: { password: BODY_SECRET },
    });
    await server.inject({ method: 'GET', url: `/boom?access_token=${QUERY_TOKEN}`, headers: credentials });
    await server.inject({ method: 'GET', url: `/debug?access_token=${QUERY_TOKEN}`, headers: credentials });

    const text = out.lines.join('');
    expect(out.lines.length).toBeGreaterThan(4);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  });

  it("redacts credential headers wherever a handler logs them, and strips the query from Fastify's own lines", async () => {
    const out = capture();
    // With Fastify's request logging on, its lines go through setupLogging's `req` serializer.
    const server = await buildApp(out, 'fastify');
    await server.inject({ method: 'GET', url: `/debug?access_token=${QUERY_TOKEN}`, headers: credentials });
    await server.inject({ method: 'GET', url: `/boom?access_token=${QUERY_TOKEN}`, headers: credentials });

    const records = out.records();
    const dump = records.find((r) => r.msg === 'headers dump') as { headers: Record<string, unknown> };
    expect(dump.headers).toMatchObject({ authorization: '[Redacted]', cookie: '[Redacted]' });
    const nested = records.find((r) => r.msg === 'nested dump') as { upstream: { headers: Record<string, unknown> } };
    expect(nested.upstream.headers).toMatchObject({ authorization: '[Redacted]', cookie: '[Redacted]' });
    const clientError = records.find((r) => r.msg === 'client error') as {
      err: { config: { headers: Record<string, unknown> } };
    };
    expect(clientError.err.config.headers.Authorization).toBe('[Redacted]');
    const upstream = records.find((r) => r.msg === 'upstream failed') as {
      err: { type: string; message: string; stack: string; config: { url: string; headers: Record<string, unknown> } };
    };
    expect(upstream.err).toMatchObject({
      type: 'Error',
      message: 'upstream said 401',
      config: { url: 'https://upstream.example/api' },
    });
    expect(upstream.err.stack).toContain('upstream said 401');
    expect(upstream.err.config.headers).toEqual({ 'Proxy-Authorization': '[Redacted]', accept: 'application/json' });
    const batch = records.find((r) => r.msg === 'batch') as { calls: { headers: Record<string, unknown> }[] };
    expect(batch.calls[0]!.headers).toEqual({ Cookie: '[Redacted]', 'x-trace': 't1' });
    const child = records.find((r) => r.msg === 'child bindings') as { headers: Record<string, unknown> };
    expect(child.headers).toEqual({ authorization: '[Redacted]' });
    const debugLines = records.filter((r) => r.path === '/debug');
    expect(debugLines.map((r) => r.statusCode)).toEqual([200]);

    const incoming = records.filter((r) => r.msg === 'incoming request') as { req: { url: string } }[];
    expect(incoming.map((r) => r.req.url)).toEqual(['/debug', '/boom']);
    const text = out.lines.join('');
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  });
});

describe('setupLogging', () => {
  it.each([
    { name: 'production → JSON on stdout', options: { environment: 'production' }, transport: false, level: 'info' },
    {
      name: 'custom level',
      options: { environment: 'production', level: 'debug' as const },
      transport: false,
      level: 'debug',
    },
    { name: 'development → pino-pretty', options: { environment: 'development' }, transport: true, level: 'info' },
    {
      name: 'a stream always gets JSON',
      options: { environment: 'development', stream: { write() {} } },
      transport: false,
      level: 'info',
    },
  ])('$name', ({ options, transport, level }) => {
    const config = setupLogging(options);
    expect(config.level).toBe(level);
    if (transport) {
      expect(config).toHaveProperty('transport.target', expect.stringMatching(/pino-pretty/));
    } else {
      expect(config).not.toHaveProperty('transport');
    }
  });

  it('the development configuration starts a working Fastify logger', async () => {
    const server = Fastify({ logger: { ...setupLogging({ environment: 'development', level: 'silent' }) } });
    await server.ready();
    await server.close();
  });
});
