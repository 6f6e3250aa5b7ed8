/** Something that happened in the domain, dispatched only after the unit of work that raised it commits. */
export interface DomainEvent<P = unknown> {
  /** Dotted name, e.g. `tasks.completed`. Subscribers match it exactly or with `*`. */
  readonly name: string;
  readonly payload: P;
  /**
   * Set when the event goes through the event broker (`EVENTS_URL`): a UUID given when it was raised,
   * the same on every delivery of it, so a handler can tell a redelivery from a new event.
   */
  readonly id?: string;
  /** With `id`: when the event was raised (ISO 8601, UTC). */
  readonly occurredAt?: string;
}

export type EntityChange = 'created' | 'updated' | 'deleted';

/** Raised for every row a unit of work or the ORM writes, once `registerDbEventDispatcher` is in place. */
export interface EntityEvent extends DomainEvent<EntityEventPayload> {
  /** `<table>.<change>`, e.g. `tasks.created`. */
  readonly name: `${string}.${EntityChange}`;
}

export interface EntityEventPayload {
  readonly change: EntityChange;
  /** Entity class name, e.g. `Task`. */
  readonly entity: string;
  /** Table / permission namespace, e.g. `tasks`. */
  readonly table: string;
  readonly primaryKey: unknown;
  /**
   * Fields written, by wire name as in the HTTP API (`title`, `project_id`, `label_ids`): all set ones
   * for created, the changed ones for updated, empty for deleted.
   */
  readonly changedFields: readonly string[];
}

/** Builds a domain event. */
export function domainEvent<P>(name: string, payload: P): DomainEvent<P> {
  return { name, payload };
}
