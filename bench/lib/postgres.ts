/**
 * The PostgreSQL part's throwaway databases: one seeded database (`core_bench_<pid>`) and, made from it
 * with `create database … template …` (a file-level copy: no re-seeding), one copy per server
 * (`core_bench_<pid>_<server>`), so each server's creates only ever grow its own table, as with the
 * SQLite file copies. Everything is dropped at the end, also after a failure or Ctrl+C (run.ts).
 */
import pg from 'pg';
import { PG_ADMIN_URLS, type ServerName } from './config.js';

/** Where the admin connection goes and what the bench has created there. */
export class BenchPostgres {
  private readonly created: string[] = [];

  private constructor(
    /** The URL the probe connected to (database `test` or `postgres`). */
    private readonly adminUrl: string,
    /** `PostgreSQL 15.x …`, for latest.json. */
    readonly version: string,
  ) {}

  /**
   * Connects to the first reachable admin URL. Returns the reason as a string when none answers, so the
   * caller can skip the PostgreSQL part (or fail, in CI).
   */
  static async connect(): Promise<BenchPostgres | string> {
    const reasons: string[] = [];
    for (const url of PG_ADMIN_URLS) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
      try {
        await client.connect();
        const { rows } = await client.query<{ version: string }>('select version() as version');
        return new BenchPostgres(url, rows[0]?.version ?? 'unknown');
      } catch (err) {
        reasons.push(`${redact(url)}: ${(err as Error).message}`);
      } finally {
        await client.end().catch(() => undefined);
      }
    }
    return `PostgreSQL is not reachable (${reasons.join('; ')})`;
  }

  /** The throwaway seed database's name; it exists once `createSeed` returned. */
  readonly seedName = `core_bench_${process.pid}`;

  /** Creates the empty seed database and returns its URL. */
  async createSeed(): Promise<string> {
    await this.create(this.seedName);
    return this.urlOf(this.seedName);
  }

  /** A copy of `core_bench_<pid>` for one server (nobody may be connected to that one meanwhile). */
  async copyFor(server: ServerName): Promise<string> {
    const name = `${this.seedName}_${server}`;
    await this.create(name, this.seedName);
    return this.urlOf(name);
  }

  /** Drops every database this run created (connected servers are disconnected: `with (force)`). */
  async dropAll(): Promise<void> {
    // Newest first: the servers' copies, then `core_bench_<pid>`, which they were made from.
    for (const name of this.created.splice(0).reverse())
      await this.admin(`drop database if exists "${name}" with (force)`);
  }

  private async create(name: string, template?: string): Promise<void> {
    await this.admin(`drop database if exists "${name}" with (force)`); // a leftover of a killed run with this pid
    await this.admin(`create database "${name}"${template ? ` template "${template}"` : ''}`);
    this.created.push(name);
  }

  private urlOf(name: string): string {
    const url = new URL(this.adminUrl);
    url.pathname = `/${name}`;
    return url.toString();
  }

  private async admin(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }
}

/** A URL without its password, for messages. */
function redact(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
