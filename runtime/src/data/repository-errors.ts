import {
  ConstraintViolationException,
  ForeignKeyConstraintViolationException,
  NotNullConstraintViolationException,
  UniqueConstraintViolationException,
} from '@mikro-orm/core';
import { ConflictError, NotFoundError, type ErrorDetail } from '../errors.js';

/** What the drivers tell about a violation; PostgreSQL's fields are copied onto MikroORM's exception. */
interface DriverDetails {
  message?: string;
  table?: string;
  column?: string;
  detail?: string;
}

/**
 * 404 for a record looked up by id. The path is `params.id`, where Core's routes take the id from, and
 * the message does not quote the id: it is the caller's input.
 */
export function notFoundError(table: string): NotFoundError {
  const message = `No ${table} record with this id.`;
  return new NotFoundError(message, [{ path: 'params.id', reason: 'not_found', message }]);
}

/**
 * Maps a constraint violation to a 409 `ConflictError` naming the table and, when the driver says,
 * the columns. Never the value: PostgreSQL's `detail` ("Key (email)=(a@b.c) already exists") is read
 * for the column list only, so a unique violation on a restricted column does not echo it.
 * Anything else is returned unchanged.
 */
export function toConflictError(
  error: unknown,
  fallbackTable: string,
  operation: 'write' | 'delete' = 'write',
): unknown {
  if (!(error instanceof ConstraintViolationException)) return error;
  const info = error as unknown as DriverDetails;
  if (operation === 'delete' && error instanceof ForeignKeyConstraintViolationException) {
    // A delete refused by an `on_delete: restrict` relation. PostgreSQL reports the referencing table
    // ("still referenced from table \"comments\""); SQLite only that a foreign key failed.
    const referencedFrom = /still referenced from table "([^"]+)"/.exec(info.detail ?? '')?.[1];
    const message =
      `Cannot delete this ${fallbackTable} record: ${referencedFrom ? `${referencedFrom} records` : 'other records'} ` +
      'still refer to it. Delete or reassign them first.';
    // The record at fault is the one the URL names.
    return new ConflictError(message, [{ path: 'params.id', reason: 'restrict', message }], { cause: error });
  }
  const located = locate(info, fallbackTable);
  const { table, columns } = located;
  const fields = columns.join(', ');
  let reason: string;
  let message: string;
  if (error instanceof UniqueConstraintViolationException) {
    reason = 'unique';
    message = fields
      ? `Conflict on ${table}: another record already has the same ${fields}`
      : `Conflict on ${table}: a unique value is already taken`;
  } else if (error instanceof ForeignKeyConstraintViolationException) {
    reason = 'foreign_key';
    const referencedFrom = /still referenced from table "([^"]+)"/.exec(info.detail ?? '')?.[1];
    const missingIn = /is not present in table "([^"]+)"/.exec(info.detail ?? '')?.[1];
    message = referencedFrom
      ? `Conflict on ${table}: the record is still referenced from ${referencedFrom}`
      : missingIn
        ? `Conflict on ${table}: ${fields || 'a reference'} points to a ${missingIn} record that does not exist`
        : `Conflict on ${table}: a foreign key constraint failed (a referenced record is missing, or this record is still referenced)`;
  } else if (error instanceof NotNullConstraintViolationException) {
    reason = 'not_null';
    message = `Conflict on ${table}: ${fields || 'a required column'} cannot be null`;
  } else {
    reason = 'constraint';
    message = `Conflict on ${table}: a constraint failed`;
  }
  const details: ErrorDetail[] =
    columns.length > 0 ? columns.map((path) => ({ path, reason, message })) : [{ reason, message }];
  return new ConflictError(message, details, { cause: error });
}

/**
 * PostgreSQL: `table`, `column` (not-null) and the column list of `detail`'s "Key (a, b)=".
 * SQLite: the message's "constraint failed: tasks.title, tasks.project_id" (no columns for foreign keys).
 */
function locate(info: DriverDetails, fallbackTable: string): { table: string; columns: string[] } {
  if (info.table) {
    const keyColumns = /Key \(([^)]*)\)=/.exec(info.detail ?? '')?.[1];
    const columns = info.column
      ? [info.column]
      : keyColumns
        ? keyColumns.split(',').map((c) => c.trim().replace(/^"|"$/g, ''))
        : [];
    return { table: info.table, columns };
  }
  const list = /constraint failed: ([\w.]+(?:,\s*[\w.]+)*)/i.exec(info.message ?? '')?.[1];
  if (!list) return { table: fallbackTable, columns: [] };
  const qualified = list.split(',').map((s) => s.trim());
  const table = qualified[0]!.includes('.') ? qualified[0]!.split('.')[0]! : fallbackTable;
  return { table, columns: qualified.map((q) => q.split('.').pop()!) };
}
