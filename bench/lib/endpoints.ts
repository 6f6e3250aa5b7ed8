/**
 * The measured endpoints. Each describes one HTTP request, identical for the three servers except for
 * what only a server can provide (its own opaque cursor at depth 90,000).
 */
import { CREATE_BODY, DEPTH, PAGE, SEARCH_BODY } from './config.js';

export type Role = 'admin' | 'viewer';

/** Per-server inputs of the endpoints. */
export interface EndpointInputs {
  /** An id that exists in every copy of the database. */
  sampleId: string;
  /** This server's `next_cursor` after row 90,000 of the list (each server issues its own format). */
  deepCursor: string;
}

export interface Endpoint {
  /** Key in `latest.json`. */
  name: string;
  /** What the table prints. */
  label: string;
  method: 'GET' | 'POST';
  path(inputs: EndpointInputs): string;
  body?: unknown;
  role: Role;
  status: number;
  /** Writes rows: run last in each repetition so the read endpoints see the same table each time. */
  writes?: boolean;
  /** Endpoints of one group are measured in alternating slices: those a target compares with each other. */
  group?: string;
}

export const ENDPOINTS: readonly Endpoint[] = [
  { name: 'by_id', label: 'GET by id', method: 'GET', path: (i) => `/tasks/${i.sampleId}`, role: 'admin', status: 200, group: 'by_id' },
  { name: 'by_id_restricted', label: 'GET by id (restricted role)', method: 'GET', path: (i) => `/tasks/${i.sampleId}`, role: 'viewer', status: 200, group: 'by_id' },
  { name: 'list', label: `list, first page (${PAGE})`, method: 'GET', path: () => `/tasks/?limit=${PAGE}`, role: 'admin', status: 200, group: 'list' },
  { name: 'list_restricted', label: 'list, first page (restricted role)', method: 'GET', path: () => `/tasks/?limit=${PAGE}`, role: 'viewer', status: 200, group: 'list' },
  {
    name: 'keyset_90k',
    label: `keyset page at depth ${DEPTH.toLocaleString('en-US')}`,
    method: 'GET',
    path: (i) => `/tasks/?limit=${PAGE}&cursor=${encodeURIComponent(i.deepCursor)}`,
    role: 'admin',
    status: 200,
    group: 'list',
  },
  { name: 'offset_90k', label: `offset page at depth ${DEPTH.toLocaleString('en-US')}`, method: 'GET', path: () => `/tasks/?limit=${PAGE}&offset=${DEPTH}`, role: 'admin', status: 200 },
  { name: 'search', label: 'search: eq + or(ilike, bool), desc', method: 'POST', path: () => '/tasks/search', body: SEARCH_BODY, role: 'admin', status: 200 },
  { name: 'create', label: 'create (unit of work)', method: 'POST', path: () => '/tasks/', body: CREATE_BODY, role: 'admin', status: 201, writes: true },
];

/** The request a server needs to hand out its cursor after row `DEPTH`: the offset page just before it. */
export function deepCursorPath(): string {
  return `/tasks/?limit=${PAGE}&offset=${DEPTH - PAGE}`;
}
