/**
 * The measured endpoints. Each describes one HTTP request (or a cycle of them: a thousand ids, a
 * thousand tokens), identical for the servers except for what only a server can provide (its own
 * opaque cursor at depth 90,000) and Platformatic DB's own spelling of the same query.
 */
import {
  CREATE_BODY,
  DEPTH,
  LADDER_ENDPOINTS,
  OWNER_SEARCH_BODY,
  PAGE,
  SEARCH_BODY,
  SEARCH_WORD,
  UNAUTHENTICATED,
  type DatabaseKind,
  type ServerName,
} from './config.js';

/** admin: every permission; viewer: `assignee_email` restricted; member: only the tasks it owns (row filter). */
export type Role = 'admin' | 'viewer' | 'member';

/** Per-server inputs of the endpoints. */
export interface EndpointInputs {
  database: DatabaseKind;
  /** Ids that exist in every copy of the database (every 100th task); the by-id endpoints cycle through them. */
  sampleIds: readonly string[];
  /**
   * Where this server's keyset page at depth 90,000 starts: its own `next_cursor` after row 90,000
   * (each server issues its own format), or for Platformatic DB the id of that row.
   */
  deepCursor: string;
}

/** How Platformatic DB is asked the same thing (it has its own query language and answers bare rows). */
export interface PeerRequest {
  method: 'GET' | 'POST';
  paths(inputs: EndpointInputs): string[];
  body?: unknown;
  status: number;
}

export interface Endpoint {
  /** Key in `latest.json`. */
  name: string;
  /** What the table prints. */
  label: string;
  method: 'GET' | 'POST';
  /** One path, or several the load generator cycles through. */
  paths(inputs: EndpointInputs): string[];
  body?: unknown;
  role: Role;
  /** Every request carries another of `SAMPLE_COUNT` tokens (each one verified once, then cached or not). */
  manyTokens?: boolean;
  status: number;
  /** Writes rows: run last in each repetition so the read endpoints see the same table each time. */
  writes?: boolean;
  /** Endpoints of one group are measured in alternating slices: those a target compares with each other. */
  group?: string;
  /**
   * Raises events (the entity's `tasks.created` and the task app's own): also run by `core_outbox`,
   * Core with the transactional outbox on, against `core`'s in-process events. The reads raise none,
   * so that line skips them.
   */
  events?: boolean;
  /** Only these servers serve it (default: all that can; see `serves`). */
  servers?: readonly ServerName[];
  /**
   * For a request whose difference is the caller (a restricted role, many tokens): the servers without
   * auth do not run it, and its "× floor" and "× Platformatic" use their figure on this endpoint,
   * measured in the same slices (same group).
   */
  peerEndpoint?: string;
  /** Platformatic DB's spelling; absent where it has no equivalent (embedding related rows in a list). */
  platformatic?: PeerRequest;
  /**
   * Another endpoint that must answer the same rows on the same server (a row-filtered list and the
   * search an unfiltered caller sends for those rows): the consistency check compares the two, and
   * wants a full page, so that the comparison is not of two empty lists.
   */
  sameRowsAs?: string;
}

const byIdPaths = (i: EndpointInputs): string[] => i.sampleIds.map((id) => `/tasks/${id}`);
/** Platformatic DB has no default order: ask for Core's (by primary key). */
const PLT_PAGE = `limit=${PAGE}&orderby.id=asc`;
/**
 * Core's search body in Platformatic DB's query string: `eq` + `or(like, eq)`, title descending then id.
 * Values inside `where.or` reach the database as written: SQLite stores booleans as 0/1 (and its LIKE
 * ignores ASCII case, as Core's ilike does), PostgreSQL parses `true`.
 */
const pltSearch = (database: DatabaseKind): string =>
  `where.priority.eq=high&where.or=${encodeURIComponent(`(title.like=%${SEARCH_WORD}%|isCompleted.eq=${database === 'sqlite' ? 1 : true})`)}&orderby.title=desc&orderby.id=asc&limit=${PAGE}`;

/** The task-table servers; the include endpoints are not written for the MikroORM baseline. */
const JOIN_SERVERS: readonly ServerName[] = ['core', 'core_info', 'floor', 'raw'];

export const ENDPOINTS: readonly Endpoint[] = [
  {
    name: 'by_id',
    label: 'GET by id (1,000 ids)',
    method: 'GET',
    paths: byIdPaths,
    role: 'admin',
    status: 200,
    group: 'by_id',
    platformatic: { method: 'GET', paths: byIdPaths, status: 200 },
  },
  {
    name: 'by_id_restricted',
    label: 'GET by id (restricted role)',
    method: 'GET',
    paths: byIdPaths,
    role: 'viewer',
    status: 200,
    group: 'by_id',
    peerEndpoint: 'by_id',
  },
  {
    name: 'by_id_many_tokens',
    label: 'GET by id (1,000 tokens)',
    method: 'GET',
    paths: byIdPaths,
    role: 'admin',
    manyTokens: true,
    status: 200,
    group: 'by_id',
    peerEndpoint: 'by_id',
  },
  {
    name: 'list',
    label: `list, first page (${PAGE})`,
    method: 'GET',
    paths: () => [`/tasks/?limit=${PAGE}`],
    role: 'admin',
    status: 200,
    group: 'list',
    platformatic: { method: 'GET', paths: () => [`/tasks/?${PLT_PAGE}`], status: 200 },
  },
  {
    name: 'list_restricted',
    label: 'list, first page (restricted role)',
    method: 'GET',
    paths: () => [`/tasks/?limit=${PAGE}`],
    role: 'viewer',
    status: 200,
    group: 'list',
    peerEndpoint: 'list',
  },
  {
    name: 'keyset_90k',
    label: `keyset page at depth ${DEPTH.toLocaleString('en-US')}`,
    method: 'GET',
    paths: (i) => [`/tasks/?limit=${PAGE}&cursor=${encodeURIComponent(i.deepCursor)}`],
    role: 'admin',
    status: 200,
    group: 'list',
    platformatic: { method: 'GET', paths: (i) => [`/tasks/?${PLT_PAGE}&where.id.gt=${i.deepCursor}`], status: 200 },
  },
  {
    name: 'offset_90k',
    label: `offset page at depth ${DEPTH.toLocaleString('en-US')}`,
    method: 'GET',
    paths: () => [`/tasks/?limit=${PAGE}&offset=${DEPTH}`],
    role: 'admin',
    status: 200,
    platformatic: { method: 'GET', paths: () => [`/tasks/?${PLT_PAGE}&offset=${DEPTH}`], status: 200 },
  },
  {
    name: 'search',
    label: 'search: eq + or(ilike, bool), desc',
    method: 'POST',
    paths: () => ['/tasks/search'],
    body: SEARCH_BODY,
    role: 'admin',
    status: 200,
    platformatic: { method: 'GET', paths: (i) => [`/tasks/?${pltSearch(i.database)}`], status: 200 },
  },
  {
    name: 'list_row_filtered',
    label: 'list, first page (row-filtered role)',
    method: 'GET',
    paths: () => [`/tasks/?limit=${PAGE}`],
    role: 'member',
    status: 200,
    group: 'row_filter',
    servers: ['core'],
    sameRowsAs: 'search_owner',
  },
  {
    name: 'search_owner',
    label: 'search: the same rows, owner_id eq',
    method: 'POST',
    paths: () => ['/tasks/search'],
    body: OWNER_SEARCH_BODY,
    role: 'admin',
    status: 200,
    group: 'row_filter',
    servers: ['core'],
  },
  {
    name: 'include_many_to_one',
    label: `list + include=project (${PAGE})`,
    method: 'GET',
    paths: () => [`/tasks/?include=project&limit=${PAGE}`],
    role: 'admin',
    status: 200,
    group: 'include',
    servers: JOIN_SERVERS,
  },
  {
    name: 'include_one_to_many',
    label: `list + include=comments (${PAGE})`,
    method: 'GET',
    paths: () => [`/tasks/?include=comments&limit=${PAGE}`],
    role: 'admin',
    status: 200,
    group: 'include',
    servers: JOIN_SERVERS,
  },
  {
    name: 'create',
    label: 'create (unit of work)',
    method: 'POST',
    paths: () => ['/tasks/'],
    body: CREATE_BODY,
    role: 'admin',
    status: 201,
    writes: true,
    events: true,
    platformatic: {
      method: 'POST',
      paths: () => ['/tasks/'],
      // Its create schema requires every non-null column, defaults or not: `isCompleted` is sent.
      body: {
        title: CREATE_BODY.title,
        description: CREATE_BODY.description,
        priority: CREATE_BODY.priority,
        assigneeEmail: CREATE_BODY.assignee_email,
        isCompleted: false,
      },
      status: 200,
    },
  },
];

/** Whether `server` runs `endpoint` (the others show "–" in its line). */
export function serves(endpoint: Endpoint, server: ServerName): boolean {
  if (server === 'core_outbox') return endpoint.events === true;
  if (server === 'floor_logger') return LADDER_ENDPOINTS.has(endpoint.name);
  if (UNAUTHENTICATED.has(server) && endpoint.peerEndpoint) return false;
  if (server === 'platformatic') return endpoint.platformatic !== undefined;
  return endpoint.servers ? endpoint.servers.includes(server) : true;
}

/** The request a server needs to hand out its cursor after row `DEPTH`: the offset page just before it. */
export function deepCursorPath(): string {
  return `/tasks/?limit=${PAGE}&offset=${DEPTH - PAGE}`;
}

/** Platformatic DB's row `DEPTH` (its keyset page filters on `id >` that row's id). */
export function platformaticDeepRowPath(): string {
  return `/tasks/?limit=1&offset=${DEPTH - 1}&orderby.id=asc`;
}
