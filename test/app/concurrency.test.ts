/**
 * Real sockets, concurrent keep-alive traffic: 500 requests alternating admin / viewer / editor over
 * 20 sockets on GET list and GET by id. No caller ever sees another caller's view (restricted field,
 * `Vary`), and every request scope opened is disposed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { expect, it } from 'vitest';
import { container } from '@core/runtime';
import { describeFixtureApp, type Role, type TaskJson } from './helpers.js';

const REQUESTS = 500;
const ROLES: Role[] = ['admin', 'viewer', 'editor'];

/** A request-scoped probe: counts instances created and disposed. */
class ScopeProbe {
  static created = 0;
  static disposed = 0;
  static readonly instances = new Set<ScopeProbe>();
  disposeCalls = 0;

  constructor() {
    ScopeProbe.created++;
    ScopeProbe.instances.add(this);
  }

  [Symbol.dispose](): void {
    this.disposeCalls++;
    ScopeProbe.disposed++;
  }
}

function configure(app: FastifyInstance): void {
  container.scoped(ScopeProbe);
  app.addHook('preHandler', async (request) => {
    request.diScope.resolve(ScopeProbe);
  });
}

interface Answer {
  role: Role;
  status: number;
  vary: string | undefined;
  body: string;
}

function get(agent: http.Agent, port: number, path: string, token: string): Promise<Omit<Answer, 'role'>> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const vary = res.headers['vary'];
          resolve({
            status: res.statusCode ?? 0,
            vary: Array.isArray(vary) ? vary.join(', ') : vary,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!condition() && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
}

describeFixtureApp(
  'concurrent keep-alive traffic',
  (ctx) => {
    it(`${REQUESTS} requests, three roles, 20 sockets: no leak of fields or Vary, every scope disposed`, async () => {
      const tasks: TaskJson[] = [];
      for (let i = 0; i < 8; i++)
        tasks.push(await ctx.createTask({ title: `task ${i}`, assignee_email: `person${i}@example.com` }));

      await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = ctx.app.server.address() as AddressInfo;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
      const sockets = new Set<unknown>();
      ctx.app.server.on('connection', (socket) => sockets.add(socket));
      ScopeProbe.created = 0;
      ScopeProbe.disposed = 0;
      ScopeProbe.instances.clear();

      let answers: Answer[];
      try {
        answers = await Promise.all(
          Array.from({ length: REQUESTS }, async (_, i) => {
            const role = ROLES[i % ROLES.length]!;
            const path = i % 2 === 0 ? '/tasks/' : `/tasks/${tasks[i % tasks.length]!.id}`;
            return { role, ...(await get(agent, port, path, ctx.token([role], role))) };
          }),
        );
      } finally {
        agent.destroy();
      }

      // Keep-alive really was used: far fewer connections than requests.
      expect(sockets.size).toBeLessThanOrEqual(20);

      const problems: string[] = [];
      for (const [i, a] of answers.entries()) {
        const restricted = a.role !== 'admin';
        const data: unknown = JSON.parse(a.body).data;
        const rows = (Array.isArray(data) ? data : [data]) as Record<string, unknown>[];
        if (a.status !== 200) problems.push(`#${i} ${a.role}: status ${a.status}`);
        if (restricted && a.body.includes('assignee_email')) problems.push(`#${i} ${a.role}: saw assignee_email`);
        if (!restricted && !rows.every((row) => typeof row['assignee_email'] === 'string'))
          problems.push(`#${i} admin: assignee_email missing`);
        if (restricted && a.vary !== 'Authorization, Cookie') problems.push(`#${i} ${a.role}: Vary ${String(a.vary)}`);
        if (!restricted && a.vary !== undefined) problems.push(`#${i} admin: Vary ${a.vary}`);
      }
      expect(problems).toEqual([]);

      // Scopes are disposed in onResponse, which may run just after the client has the bytes.
      await waitFor(() => ScopeProbe.disposed >= ScopeProbe.created, 2000);
      expect(ScopeProbe.created).toBe(REQUESTS);
      expect(ScopeProbe.disposed).toBe(ScopeProbe.created);
      expect([...ScopeProbe.instances].filter((probe) => probe.disposeCalls !== 1)).toEqual([]);
    });
  },
  { configure },
);
