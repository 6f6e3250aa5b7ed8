/**
 * What every part of the bench agrees on: the data set, the tokens' secret, the search request and the
 * load shape. Changing a value here changes it for all three servers at once.
 */
import { fileURLToPath } from 'node:url';

/** Repository root (bench/lib/ → ../../). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where bundled servers go: inside the repo so their bare imports resolve from its node_modules. */
export const BUILD_DIR = fileURLToPath(new URL('../.build/', import.meta.url));

export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));

/** Rows in the seeded `tasks` table. */
export const ROW_COUNT = 100_000;

/** The deep pages start after this many rows (keyset) or skip this many (offset). */
export const DEPTH = 90_000;

/** Page size of list, keyset, offset and search. */
export const PAGE = 20;

/** 10 keep-alive connections, as in the measurements. */
export const CONNECTIONS = 10;

/** HS256 key shared by the three servers and the token signer (≥ 32 chars: production refuses less). */
export const SECRET_KEY = 'bench-secret-key-0123456789abcdef-0123456789abcdef';

/** The fixture app's policies; the raw and MikroORM servers read the same file. */
export const POLICIES_PATH = fileURLToPath(new URL('../../fixtures/apps/tasks/src/policies.json', import.meta.url));

/** The word the search's `ilike` looks for; the seed puts it in about 10% of titles. */
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

/** Body of the create endpoint (the same for every request; titles are not unique). */
export const CREATE_BODY = { title: 'Benchmark task', description: 'created by npm run bench', priority: 'high', assignee_email: 'bench@example.com' };

export type ServerName = 'raw' | 'mikro' | 'core';
export const SERVER_NAMES: readonly ServerName[] = ['raw', 'mikro', 'core'];
