/**
 * Named handlers with a real broker, on SQLite and PostgreSQL: a handler subscribed with a name on the
 * kernel's dispatcher receives the events from its durable consumer (not in-process), is told the
 * event id, is retried with a delay when it throws, and after `EVENTS_MAX_ATTEMPTS` the event goes to
 * `<project>.dlq.<handler>` while the other events, and the other handlers, go on unaffected.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DomainEvent } from '@core/runtime';
import { describePerDatabase } from '../helpers/databases.js';
import { describeWithNats, eventually, inspector, startNats, type NatsServer } from '../helpers/nats.js';
import { startEventsApp, type EventsApp } from './fixture-app.js';

interface Call {
  readonly event: DomainEvent;
  readonly at: number;
}

describeWithNats('named event handlers', () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNats();
  });
  afterAll(async () => {
    await nats?.destroy();
  });

  describePerDatabase('retries and dead letters', ({ name: dialect, url }) => {
    const project = `handlers_${dialect}`;
    let ctx: EventsApp;
    let look: Awaited<ReturnType<typeof inspector>>;
    const audit: Call[] = [];
    const flaky: Call[] = [];
    /** Every in-process delivery of a named handler would land here: there must be none. */
    const inProcessNamed: DomainEvent[] = [];

    beforeAll(async () => {
      ctx = await startEventsApp(
        url(),
        {
          EVENTS_URL: nats.url,
          PROJECT_NAME: project,
          EVENTS_MAX_ATTEMPTS: '3',
          EVENTS_RETRY_DELAY_S: '0.2',
          EVENTS_RELAY_INTERVAL_S: '0.1',
          EVENTS_OUTBOX_RETENTION_S: '0.3',
        },
        (kernel) => {
          kernel.dispatcher.subscribe('tasks.created', (event) => void audit.push({ event, at: Date.now() }), {
            name: 'audit',
          });
          kernel.dispatcher.subscribe(
            'tasks.created',
            (event) => {
              flaky.push({ event, at: Date.now() });
              if ((event.payload as { title?: string }).title === 'poison') throw new Error('cannot digest poison');
            },
            { name: 'flaky' },
          );
        },
      );
      await ctx.broker.whenReady();
      look = await inspector(nats.url);
    });
    afterAll(async () => {
      await look?.close();
      await ctx?.close();
    });

    const create = async (title: string): Promise<string> => {
      const res = await ctx.request({ method: 'POST', url: '/tasks/', payload: { title } });
      expect(res.statusCode).toBe(201);
      return (res.json().data as { id: string }).id;
    };

    it('retries a throwing handler with growing delays, then dead-letters the event; the rest is handled once', async () => {
      ctx.kernel.dispatcher.subscribe('tasks.created', (event) => void inProcessNamed.push(event));
      const titles = ['first', 'poison', 'last'];
      for (const title of titles) await create(title);
      // Each create raises two `tasks.created` events: the entity event and the service's domain event.
      await eventually(() => (audit.length >= 6 ? true : undefined), 10_000, 'audit to see 6 events');
      const dead = await eventually(
        async () => {
          const messages = await look.messages(`HANDLERS_${dialect.toUpperCase()}_DLQ`);
          return messages.length > 0 ? messages : undefined;
        },
        15_000,
        'a dead letter',
      );

      // audit: every event once, each with the id the broker carried.
      const auditIds = audit.map((c) => c.event.id);
      expect(new Set(auditIds).size).toBe(6);
      expect(auditIds.every((id) => typeof id === 'string')).toBe(true);

      // flaky: the poison event three times (EVENTS_MAX_ATTEMPTS), 0.2 s then 0.4 s apart; the others once.
      const poison = flaky.filter((c) => (c.event.payload as { title?: string }).title === 'poison');
      expect(poison).toHaveLength(3);
      expect(new Set(poison.map((c) => c.event.id)).size).toBe(1);
      expect(poison[1]!.at - poison[0]!.at).toBeGreaterThanOrEqual(150);
      expect(poison[2]!.at - poison[1]!.at).toBeGreaterThanOrEqual(300);
      const others = flaky.filter((c) => (c.event.payload as { title?: string }).title !== 'poison');
      expect(others).toHaveLength(5);
      expect(new Set(others.map((c) => c.event.id)).size).toBe(5);

      // The dead letter: the event's own body on <project>.dlq.flaky, with why and after how many attempts.
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({
        subject: `${project}.dlq.flaky`,
        headers: {
          'Core-Handler': 'flaky',
          'Core-Error': 'cannot digest poison',
          'Core-Attempts': '3',
          'Core-Subject': `${project}.events.tasks.created`,
        },
        body: { id: poison[0]!.event.id, name: 'tasks.created', payload: { title: 'poison' } },
      });

      // Named handlers never ran in-process; the unnamed one did, once per event, in the writing process.
      expect(inProcessNamed).toHaveLength(6);
      expect(new Set(inProcessNamed.map((e) => e.id))).toEqual(new Set(auditIds));

      // Nothing is left to deliver to either consumer.
      for (const durable of ['audit', 'flaky']) {
        const info = await look.jsm.consumers.info(`HANDLERS_${dialect.toUpperCase()}_EVENTS`, durable);
        expect({ durable, pending: info.num_pending, unacked: info.num_ack_pending }).toEqual({
          durable,
          pending: 0,
          unacked: 0,
        });
      }
      expect(ctx.broker.stats().handlers).toMatchObject({
        audit: { handled: 6, retried: 0, deadLettered: 0 },
        flaky: { handled: 5, retried: 2, deadLettered: 1 },
      });
    });

    it('prunes published rows after EVENTS_OUTBOX_RETENTION_S', async () => {
      await create('pruned soon');
      await eventually(
        async () => {
          const rows = await ctx.db.select<{ n: number | string }>('select count(*) as n from core_outbox');
          return Number(rows[0]!.n) === 0 ? true : undefined;
        },
        5000,
        'core_outbox to be emptied',
      );
      expect(ctx.broker.stats().relay.pruned).toBeGreaterThanOrEqual(8);
    });
  });
});
