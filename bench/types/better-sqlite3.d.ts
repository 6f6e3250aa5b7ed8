// The subset of better-sqlite3 12's API the bench uses (@types/better-sqlite3 is not installed).
declare module 'better-sqlite3' {
  namespace Database {
    interface Statement {
      run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
      get(...params: unknown[]): unknown;
      all(...params: unknown[]): unknown[];
    }
  }
  class Database {
    constructor(filename: string, options?: { readonly?: boolean });
    prepare(sql: string): Database.Statement;
    pragma(source: string): unknown;
    transaction<F extends (...args: never[]) => unknown>(fn: F): F;
    close(): void;
  }
  export default Database;
}
