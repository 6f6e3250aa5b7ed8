import { dbManager, type Database } from '../db/database.js';
import type { Dispatcher } from '../events/dispatcher.js';
import { loadEventsSettings, type Settings } from '../settings/settings.js';
import { bridgeEntityEvents } from '../uow/entity-events.js';
import { attachEventBroker, detachEventBroker, eventBrokerOf } from './event-broker.js';

/**
 * Forwards entity created/updated/deleted events of `db` to `dispatcher`, each after its transaction
 * commits and never after a rollback; works for units of work and for a plain `em.flush()` alike.
 * Also makes `dispatcher` the default dispatcher of `UnitOfWork.run` on `db`.
 *
 * Events are named `<table>.<created|updated|deleted>` (e.g. `tasks.created`) with the payload
 * `{ change, entity, table, primaryKey, changedFields }`: `changedFields` lists the fields written,
 * under their wire names as in the HTTP API (`title`, `project_id`, `label_ids`): every set field on
 * create, only the changed ones on update, a many-to-many key when its links changed, none on delete.
 * Rows removed by the database itself (`ON DELETE CASCADE`) are not reported, since the ORM never
 * sees them.
 *
 * Registering again for the same database replaces the dispatcher. Returns a function that
 * unregisters it (if it is still the registered one).
 *
 * With `EVENTS_URL` set, this also attaches an `EventBroker` to the dispatcher: the events of `db` go
 * through the transactional outbox to NATS JetStream, and handlers subscribed with a name receive
 * them from there (see `docs/events.md`). The kernel's lifespan starts and stops it.
 */
export function registerDbEventDispatcher(
  dispatcher: Dispatcher,
  db: Database = dbManager.db,
  options: RegisterDbEventDispatcherOptions = {},
): () => void {
  const { previous, unregister } = bridgeEntityEvents(dispatcher, db);
  if (previous && previous !== dispatcher && eventBrokerOf(previous)?.db === db) detachEventBroker(previous);
  const settings = options.settings ?? loadEventsSettings();
  attachEventBroker(dispatcher, db, { events: settings.events, projectName: settings.projectName });
  return () => {
    if (!unregister()) return;
    if (eventBrokerOf(dispatcher)?.db === db) detachEventBroker(dispatcher);
  };
}

export interface RegisterDbEventDispatcherOptions {
  /**
   * Where `EVENTS_*` and `PROJECT_NAME` come from; default: the environment and `.env`, so an app
   * wired without them turns the outbox on by settings alone. Pass the app's settings for overrides.
   */
  settings?: Pick<Settings, 'events' | 'projectName'>;
}
