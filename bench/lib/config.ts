/**
 * What every part of the bench agrees on: the data set, the tokens' secret, the search request, the
 * load shape and the servers. Changing a value here changes it for every server at once.
 */
import { fileURLToPath } from 'node:url';

/** Repository root (bench/lib/ → ../../). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Where this run's bundled servers go: inside the repo so their external imports resolve from its
 * node_modules, and one folder per process so concurrent runs do not overwrite each other's bundles.
 */
export const BUILD_DIR = fileURLToPath(new URL(`../.build/${process.pid}/`, import.meta.url));

export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/** The databases the bench can run on; `--db both` runs SQLite first, then PostgreSQL. */
export type DatabaseKind = 'sqlite' | 'postgresql';

/**
 * Where the PostgreSQL part connects to create (and drop) its throwaway databases: a server with trust
 * auth. `CORE_BENCH_PG_URL` wins, then the test suites' `CORE_TEST_PG_URL`; without either, database
 * `test` on 127.0.0.1:5432, then `postgres` on the same server.
 */
export const PG_ADMIN_URLS: readonly string[] = (() => {
  const configured = process.env['CORE_BENCH_PG_URL'] ?? process.env['CORE_TEST_PG_URL'];
  return configured
    ? [configured]
    : ['postgresql://postgres@127.0.0.1:5432/test', 'postgresql://postgres@127.0.0.1:5432/postgres'];
})();

/** Rows the bench writes into `tasks`. */
export const ROW_COUNT = 100_000;

/** Rows in `projects`: the many-to-one side of every task (about 100 tasks each, 10% of tasks have none). */
export const PROJECT_COUNT = 1_000;

/** Distinct ids the by-id endpoints cycle through (every 100th task), and distinct tokens of `by_id_many_tokens`. */
export const SAMPLE_COUNT = 1_000;

/** The deep pages start after this many rows (keyset) or skip this many (offset). */
export const DEPTH = 90_000;

/** Page size of list, keyset, offset and search. */
export const PAGE = 20;

/** Keep-alive connections the load generator opens to a server (no pipelining). */
export const CONNECTIONS = 10;

/** HS256 key shared by the servers that authenticate and the token signer (≥ 32 chars: production refuses less). */
export const SECRET_KEY = 'bench-secret-key-0123456789abcdef-0123456789abcdef';

/**
 * The bench's policies: the fixture app's roles, plus `member`, whose tasks are confined by a row filter
 * (`owner_id` eq the token's `sub`), so every other line runs with a row filter in the policies. The
 * generated Core project gets a copy; the baselines read it too, and are never sent a member's token.
 */
export const POLICIES_PATH = fileURLToPath(new URL('../specs/policies.json', import.meta.url));

/** The word the search's `ilike` looks for; the data set puts it in about 10% of titles. */
export const SEARCH_WORD = 'report';

/** `eq` + `or(ilike, bool)`, sorted by title descending, 20 rows (about 9% of the table matches). */
export const SEARCH_BODY = {
  filters: [
    { field: 'priority', op: 'eq', value: 'high' },
    {
      op: 'or',
      items: [
        { field: 'title', op: 'ilike', value: SEARCH_WORD },
        { field: 'is_completed', op: 'eq', value: true },
      ],
    },
  ],
  sort: [{ field: 'title', order: 'desc' }],
  limit: PAGE,
} as const;

/** Owners of the seeded tasks (`owner_id`), each of about a tenth of them; creates leave it null. */
export const OWNER_COUNT = 10;

/** Owner `k`'s id, as `owner_id` holds it and as its token's `sub` says it. */
export const ownerSub = (k: number): string => `bench-owner-${k}`;

/** The `sub` of the row-filtered caller (role `member`, which sees the tasks it owns): one of the owners. */
export const MEMBER_SUB = ownerSub(3);

/** What an unfiltered caller asks to get the member's list: its rows, in the list's order (by id), 20 of them. */
export const OWNER_SEARCH_BODY = {
  filters: [{ field: 'owner_id', op: 'eq', value: MEMBER_SUB }],
  limit: PAGE,
} as const;

/** Body of the create endpoint (the same for every request; titles are not unique). */
export const CREATE_BODY = {
  title: 'Benchmark task',
  description: 'created by npm run bench',
  priority: 'high',
  assignee_email: 'bench@example.com',
};

/**
 * The servers, each in its own process on its own copy of the data:
 * - `core`: the CLI-generated project at the comparison's log level (`COMPARISON_LOG_LEVEL`);
 * - `core_info`: the same bundle at its production default (info: one JSON line per request);
 * - `core_outbox`: the same bundle at the comparison's log level with `EVENTS_URL` set, so its events go
 *   through the transactional outbox to a private NATS JetStream server (outbox.ts); it runs only the
 *   endpoints that raise events (`create`), against `core`'s in-process events;
 * - `floor`: Fastify 5 + the driver's prepared statements, the same routes and validation, no auth, no
 *   logging: what this stack costs with nothing on top (the reference of every "× floor");
 * - `floor_logger`: the floor with Fastify's logger on at the comparison's level and the request-line
 *   hook (no line is written at that level): the first step from the floor towards the authenticated
 *   servers, on GET by id only (`LADDER_ENDPOINTS`), where a request's fixed costs weigh most;
 * - `platformatic`: Platformatic DB 2.61.0 serving the same tables (installed on demand, see peers.ts);
 * - `raw`: the floor's code plus a JWT check, the policies and the Vary header (authenticated floor);
 * - `mikro`: hand-written Fastify + MikroORM, the same auth as `raw`.
 */
export type ServerName =
  | 'core'
  | 'core_outbox'
  | 'core_info'
  | 'floor'
  | 'floor_logger'
  | 'platformatic'
  | 'raw'
  | 'mikro';
export const SERVER_NAMES: readonly ServerName[] = [
  'core',
  'core_outbox',
  'core_info',
  'floor',
  'floor_logger',
  'platformatic',
  'raw',
  'mikro',
];

/** The servers that do not authenticate: a restricted role or a thousand tokens mean nothing to them. */
export const UNAUTHENTICATED: ReadonlySet<ServerName> = new Set(['floor', 'floor_logger', 'platformatic']);

/** The endpoints `floor_logger` runs: what the logger alone costs is told by the cheapest request. */
export const LADDER_ENDPOINTS: ReadonlySet<string> = new Set(['by_id']);

/** What the table calls each server. */
export const SERVER_LABELS: Record<ServerName, string> = {
  core: 'Core',
  core_outbox: 'Core, outbox + NATS',
  core_info: 'Core, log level info',
  floor: 'floor',
  floor_logger: 'floor + logger',
  platformatic: 'Platformatic DB',
  raw: 'raw + JWT',
  mikro: 'MikroORM + JWT',
};

/** Every server logs at this level during the comparison (none writes a line per request at it). */
export const COMPARISON_LOG_LEVEL = 'warn';
