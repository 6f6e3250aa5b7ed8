/**
 * The transactional outbox with a real broker (a private nats-server) on SQLite and PostgreSQL, through
 * the fixture app whose wiring predates it: with `EVENTS_URL` set, a unit of work writes its events to
 * `core_outbox` in its own transaction, the relay publishes them to `<PROJECT>_EVENTS` under
 * `<project>.events.<name>` with `Nats-Msg-Id` = the event id, and marks them published.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  domainEvent,
  EventRefusedError,
  SettingsError,
  UnitOfWork,
  type DomainEvent,
  type QueryEvent,
} from '@core/runtime';
import { loadEventsSettings } from '../../runtime/src/settings/settings.js';
import { describePerDatabase } from '../helpers/databases.js';
import { describeWithNats, eventually, freePort, inspector, startNats, type NatsServer } from '../helpers/nats.js';
import { startEventsApp, type EventsApp } from './fixture-app.js';

interface OutboxRow {
  id: string;
  name: string;
  body: string;
  published_at: unknown;
}

describeWithNats('events outbox', () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNats();
  });
  afterAll(async () => {
    await nats?.destroy();
  });

  describePerDatabase('outbox and relay', ({ name: dialect, url }) => {
    // One project (so one stream) per database suite: both suites share the server.
    const project = `Outbox Test ${dialect}`;
    const stream = `OUTBOX_TEST_${dialect.toUpperCase()}_EVENTS`;
    const subject = (name: string): string => `outbox_test_${dialect}.events.${name}`;
    let ctx: EventsApp;
    let look: Awaited<ReturnType<typeof inspector>>;
    /** Events the in-process (unnamed) handler received. */
    const local: DomainEvent[] = [];

    beforeAll(async () => {
      ctx = await startEventsApp(
        url(),
        { EVENTS_URL: nats.url, PROJECT_NAME: project, EVENTS_RELAY_INTERVAL_S: '0.2' },
        (kernel) => {
          kernel.dispatcher.subscribe('*', (event) => void local.push(event));
        },
      );
      await ctx.broker.whenReady();
      look = await inspector(nats.url);
    });
    afterAll(async () => {
      await look?.close();
      await ctx?.close();
    });

    const outbox = (): Promise<OutboxRow[]> =>
      ctx.db.select<OutboxRow>('select id, name, body, published_at from core_outbox order by seq');
    const streamMessages = (): ReturnType<typeof look.messages> => look.messages(stream);
    /** The stream's messages once it holds `count`, and not one more. */
    const published = async (count: number) => {
      const messages = await eventually(
        async () => {
          const all = await streamMessages();
          return all.length >= count ? all : undefined;
        },
        10_000,
        `${count} messages in ${stream}`,
      );
      expect(messages).toHaveLength(count);
      return messages;
    };

    it("publishes a create's entity and domain events once each, with the event id as Nats-Msg-Id, and marks them published", async () => {
      const sql: QueryEvent[] = [];
      const off = ctx.db.onQuery((q) => sql.push(q));
      const res = await ctx.request({
        method: 'POST',
        url: '/tasks/',
        payload: { title: 'ship the outbox', assignee_email: 'secret@example.com' },
      });
      off();
      expect(res.statusCode).toBe(201);
      const task = res.json().data as { id: string };

      // The rows were written inside the create's transaction, before its COMMIT (no single-statement create).
      const statements = sql.map((q) => q.sql.trim().split(/\s+/).slice(0, 3).join(' ').toLowerCase());
      const begin = statements.findIndex((s) => s.startsWith('begin'));
      const insertOutbox = statements.findIndex((s) => /^insert into .core_outbox./.test(s));
      const commit = statements.findIndex((s) => s.startsWith('commit'));
      expect(begin).toBeGreaterThanOrEqual(0);
      expect(insertOutbox).toBeGreaterThan(begin);
      expect(commit).toBeGreaterThan(insertOutbox);

      const messages = await published(2);
      expect(messages.map((m) => m.subject)).toEqual([subject('tasks.created'), subject('tasks.created')]);
      const [entity, domain] = messages;
      for (const m of messages) {
        expect(m.msgId).toBe(m.body.id);
        expect(m.body).toEqual({
          id: expect.any(String),
          name: 'tasks.created',
          occurred_at: expect.any(String),
          payload: expect.anything(),
        });
        expect(new Date(m.body.occurred_at).toISOString()).toBe(m.body.occurred_at);
      }
      // Entity events carry the key and the names of the written fields, never their values.
      expect(entity!.body.payload).toEqual({
        change: 'created',
        entity: 'Task',
        table: 'tasks',
        primaryKey: task.id,
        changedFields: expect.arrayContaining(['id', 'title', 'assignee_email']),
      });
      expect(JSON.stringify(entity!.body)).not.toContain('secret@example.com');
      expect(domain!.body.payload).toEqual({ id: task.id, title: 'ship the outbox' });

      // In-process handlers got the same events, with the ids the broker carries.
      expect(local.map((e) => e.id)).toEqual([entity!.msgId, domain!.msgId]);

      const rows = await eventually(
        async () => {
          const all = await outbox();
          return all.every((r) => r.published_at !== null) ? all : undefined;
        },
        5000,
        'rows marked published',
      );
      expect(rows.map((r) => r.id)).toEqual([entity!.msgId, domain!.msgId]);
      expect(rows.map((r) => JSON.parse(r.body))).toEqual([entity!.body, domain!.body]);
    });

    it('writes nothing and publishes nothing for a unit that rolls back', async () => {
      const before = (await streamMessages()).length;
      const rowsBefore = (await outbox()).length;
      await expect(
        UnitOfWork.run(async (uow) => {
          await uow.query('insert into tasks (id, title, priority, is_completed) values (?, ?, ?, ?)', [
            crypto.randomUUID(),
            'doomed',
            'low',
            ctx.db.toDriverValue(false),
          ]);
          uow.raise(domainEvent('tasks.doomed', { why: 'rolled back' }));
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      // A later event proves the relay ran since.
      await UnitOfWork.run((uow) => uow.raise(domainEvent('tasks.marker', {})));
      const messages = await published(before + 1);
      expect(messages.at(-1)!.body.name).toBe('tasks.marker');
      expect((await outbox()).map((r) => r.name).slice(rowsBefore)).toEqual(['tasks.marker']);
    });

    it('refuses an event over 1 MiB where it is raised: the unit rolls back and nothing is stored', async () => {
      const before = (await outbox()).length;
      let raised: unknown;
      await expect(
        UnitOfWork.run(async (uow) => {
          await uow.query('insert into tasks (id, title, priority, is_completed) values (?, ?, ?, ?)', [
            crypto.randomUUID(),
            'too big',
            'low',
            ctx.db.toDriverValue(false),
          ]);
          try {
            uow.raise(domainEvent('tasks.attached', { blob: 'x'.repeat(1024 * 1024) }));
          } catch (err) {
            raised = err;
            throw err;
          }
        }),
      ).rejects.toBeInstanceOf(EventRefusedError);
      expect((raised as Error).message).toMatch(/over the broker's limit/);
      expect(
        (await ctx.db.select<{ n: number | string }>("select count(*) as n from tasks where title = 'too big'"))[0]!.n,
      ).toEqual(dialect === 'sqlite' ? 0 : '0');
      expect((await outbox()).length).toBe(before);
      // A name no subject can carry is refused the same way.
      await expect(UnitOfWork.run((uow) => uow.raise(domainEvent('tasks.*', {})))).rejects.toBeInstanceOf(
        EventRefusedError,
      );
    });

    it('records an event dispatched outside a unit of work in a transaction of its own, then publishes it', async () => {
      const before = (await streamMessages()).length;
      await ctx.kernel.dispatcher.dispatch(domainEvent('reports.ready', { report: 7 }));
      // Recorded before dispatch resolves.
      expect((await outbox()).at(-1)).toMatchObject({ name: 'reports.ready' });
      const messages = await published(before + 1);
      expect(messages.at(-1)).toMatchObject({
        subject: subject('reports.ready'),
        body: { name: 'reports.ready', payload: { report: 7 } },
      });
    });

    it('publishes rows another process committed and never announced (found by the periodic pass)', async () => {
      const before = (await streamMessages()).length;
      const id = crypto.randomUUID();
      const body = JSON.stringify({
        id,
        name: 'tasks.left_behind',
        occurred_at: new Date().toISOString(),
        payload: { n: 1 },
      });
      // Written the way a unit writes it, by SQL alone: nothing tells this process's relay about it.
      await UnitOfWork.run((uow) =>
        uow.query('insert into core_outbox (id, name, body, occurred_at) values (?, ?, ?, ?)', [
          id,
          'tasks.left_behind',
          body,
          dialect === 'sqlite' ? Date.now() : new Date(),
        ]),
      );
      const messages = await published(before + 1);
      expect(messages.at(-1)).toMatchObject({ msgId: id, subject: subject('tasks.left_behind') });
    });
  });
});

describe('an app whose broker never answers', () => {
  it('starts, commits creates with their events pending in the outbox, and closes promptly', async () => {
    const port = await freePort(); // nothing listens there
    let named = 0;
    const ctx = await startEventsApp(
      'sqlite::memory:',
      { EVENTS_URL: `nats://127.0.0.1:${port}`, PROJECT_NAME: 'nobroker' },
      (kernel) => {
        kernel.dispatcher.subscribe('tasks.created', () => void named++, { name: 'never-runs' });
      },
    );
    try {
      const res = await ctx.request({ method: 'POST', url: '/tasks/', payload: { title: 'waits for the broker' } });
      expect(res.statusCode).toBe(201);
      const pending = await ctx.db.select<{ name: string; published_at: unknown }>(
        'select name, published_at from core_outbox',
      );
      expect(pending).toEqual([
        { name: 'tasks.created', published_at: null },
        { name: 'tasks.created', published_at: null },
      ]);
      expect(ctx.broker.stats().ready).toBe(false);
    } finally {
      const started = Date.now();
      await ctx.close();
      expect(Date.now() - started).toBeLessThan(3000);
    }
    expect(named).toBe(0);
  });
});

describe('EVENTS_* settings', () => {
  const load = (env: Record<string, string>) => loadEventsSettings({ cwd: '/nonexistent', env });

  it('are off without EVENTS_URL, with the documented defaults', () => {
    expect(load({})).toEqual({
      projectName: 'nonexistent',
      events: {
        url: undefined,
        maxAttempts: 5,
        retryDelayS: 1,
        ackWaitS: 30,
        relayIntervalS: 1,
        outboxRetentionS: 86_400,
        streamMaxAgeS: 604_800,
        duplicateWindowS: 120,
      },
    });
    expect(load({ EVENTS_URL: 'nats://a:4222, nats://b:4222' }).events.url).toBe('nats://a:4222,nats://b:4222');
  });

  it.each([
    [{ EVENTS_URL: 'http://user:hunter2@broker:4222' }, /EVENTS_URL must be nats:\/\/host:port/],
    [{ EVENTS_MAX_ATTEMPTS: '0' }, /EVENTS_MAX_ATTEMPTS must be a whole number from 1/],
    [{ EVENTS_ACK_WAIT_S: '0.5' }, /EVENTS_ACK_WAIT_S must be a number of seconds of at least 1/],
    [{ EVENTS_STREAM_MAX_AGE_S: '60', EVENTS_DUPLICATE_WINDOW_S: '120' }, /must not exceed EVENTS_STREAM_MAX_AGE_S/],
  ])('refuse %j with a message that says what to set', (env, message) => {
    expect(() => load(env)).toThrow(message);
    expect(() => load(env)).toThrow(SettingsError);
    // A URL's password is never echoed.
    expect(() => load(env)).not.toThrow(/hunter2/);
  });
});
