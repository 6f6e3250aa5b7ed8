/**
 * The one rule that lets a unit of work send its write without BEGIN and COMMIT. A single statement is
 * atomic by itself, so a unit whose whole work is that statement needs no transaction around it, and
 * on PostgreSQL that saves two round trips. Only the code that opened the unit can know that nothing
 * follows the statement, so it declares it (`UnitOfWork.allowLastStatementAlone`: a `BaseService`
 * with `createInTransaction = false`, or `BaseRepository.create` in a unit of its own); the rule then
 * refuses whatever else would have to run in the same transaction as the statement.
 */

/** What `maySkipTransaction` decides from, for the statement a unit announced as its last. */
export interface SingleStatementFacts {
  /** The code that opened the unit declared that nothing it runs follows this statement. */
  readonly declared: boolean;
  /** The statement would be the unit's first: none sent yet, nothing pending in `uow.em`, no nested unit failed. */
  readonly first: boolean;
  /** The unit writes its events to the outbox (an event broker is attached): they commit with the write. */
  readonly writesOutbox: boolean;
  /** The write checks the record's version (a version column, an `If-Match`) in its transaction. */
  readonly checksVersion: boolean;
  /** A row-level filter is checked on the written row after the write, before the unit commits. */
  readonly checksRowFilter: boolean;
}

/**
 * Whether the unit may send this statement alone, without BEGIN and COMMIT: declared, and its first
 * statement, and nothing that must commit or be checked with it. Each of the other facts keeps the
 * transaction whatever the declaration says.
 */
export function maySkipTransaction(facts: SingleStatementFacts): boolean {
  return facts.declared && facts.first && !facts.writesOutbox && !facts.checksVersion && !facts.checksRowFilter;
}
