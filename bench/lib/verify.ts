/**
 * Before measuring: every endpoint is requested once from every server that runs it and the answers
 * compared with Core's, so a ratio never compares different work (different rows, a 4xx, a missing
 * field). Reads must return the same `data`; `meta` must have the same keys (cursors differ by design);
 * a create must answer its status with the same fields (and a `Location` header where Core sends one).
 * Platformatic DB answers bare rows with camelCase keys: they are compared after renaming the keys.
 * An endpoint with `sameRowsAs` (the row-filtered list) must also return a full page, the very rows its
 * counterpart (the equivalent search) returns on the same server.
 */
import { isDeepStrictEqual } from 'node:util';
import { PAGE, type ServerName } from './config.js';
import { ENDPOINTS, serves, type Endpoint, type EndpointInputs } from './endpoints.js';
import { requestsFor, type Tokens } from './load.js';

export interface Target {
  name: ServerName;
  baseUrl: string;
  inputs: EndpointInputs;
}

interface Answer {
  status: number;
  body: { data?: unknown; meta?: unknown } | null;
  location: string | null;
  vary: string | null;
}

/** `isCompleted` → `is_completed`, in every object of a row or a list of rows. */
function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snakeKeys(v)]),
  );
}

async function ask(target: Target, endpoint: Endpoint, tokens: Tokens): Promise<Answer> {
  // The first request of the cycle the load generator sends.
  const request = requestsFor(endpoint, target.name, target.inputs, tokens)[0]!;
  const res = await fetch(target.baseUrl + request.path, {
    method: request.method,
    headers: request.headers,
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  const text = await res.text();
  let body: Answer['body'] = null;
  try {
    const parsed = JSON.parse(text) as unknown;
    body = target.name === 'platformatic' ? { data: snakeKeys(parsed) } : (parsed as Answer['body']);
  } catch {
    // reported below as a mismatch
  }
  return { status: res.status, body, location: res.headers.get('location'), vary: res.headers.get('vary') };
}

function keysOf(value: unknown): string {
  const row = Array.isArray(value) ? value[0] : value;
  return row && typeof row === 'object' ? Object.keys(row).sort().join(',') : typeof row;
}

/** Returns one line per problem; empty when every server agrees with Core on every endpoint it runs. */
export async function verifyServers(targets: readonly Target[], tokens: Tokens): Promise<string[]> {
  const problems: string[] = [];
  const core = targets.find((t) => t.name === 'core');
  if (!core) throw new Error('the consistency check compares with Core, which is not running');
  /** Every answer, by `<endpoint> <server>`, for the `sameRowsAs` comparisons below. */
  const answered = new Map<string, Answer>();
  for (const endpoint of ENDPOINTS) {
    const runs = targets.filter((t) => serves(endpoint, t.name));
    const answers = await Promise.all(runs.map((t) => ask(t, endpoint, tokens)));
    const reference = answers[runs.indexOf(core)]!;
    answers.forEach((answer, i) => {
      const server = runs[i]!.name;
      answered.set(`${endpoint.name} ${server}`, answer);
      const who = `${endpoint.name} on ${server}`;
      const status = server === 'platformatic' ? endpoint.platformatic!.status : endpoint.status;
      if (answer.status !== status) problems.push(`${who}: status ${answer.status}, expected ${status}`);
      if (!answer.body) {
        problems.push(`${who}: the body is not JSON`);
        return;
      }
      const data = answer.body.data;
      if (endpoint.writes) {
        if (keysOf(data) !== keysOf(reference.body?.data))
          problems.push(`${who}: fields ${keysOf(data)} differ from Core's ${keysOf(reference.body?.data)}`);
        if (server !== 'platformatic' && !answer.location) problems.push(`${who}: no Location header`);
      } else if (!isDeepStrictEqual(data, reference.body?.data)) {
        problems.push(`${who}: data differs from Core's: ${JSON.stringify(data).slice(0, 300)} …`);
      }
      if (server !== 'platformatic' && keysOf(answer.body.meta) !== keysOf(reference.body?.meta))
        problems.push(`${who}: meta ${keysOf(answer.body.meta)} differs`);
      if (endpoint.role === 'viewer' && !/authorization/i.test(answer.vary ?? ''))
        problems.push(`${who}: no Vary: Authorization`);
      if (endpoint.role === 'viewer' && keysOf(data).includes('assignee_email'))
        problems.push(`${who}: a restricted field is visible`);
    });
  }
  for (const endpoint of ENDPOINTS) {
    if (!endpoint.sameRowsAs) continue;
    for (const target of targets) {
      const answer = answered.get(`${endpoint.name} ${target.name}`);
      if (!answer) continue;
      const who = `${endpoint.name} on ${target.name}`;
      const data = answer.body?.data;
      const other = answered.get(`${endpoint.sameRowsAs} ${target.name}`);
      if (!other) problems.push(`${who}: ${endpoint.sameRowsAs}, which must return the same rows, did not run`);
      else if (!Array.isArray(data) || data.length !== PAGE)
        problems.push(`${who}: ${Array.isArray(data) ? data.length : 'no'} rows, expected a full page of ${PAGE}`);
      else if (!isDeepStrictEqual(data, other.body?.data))
        problems.push(
          `${who}: rows differ from ${endpoint.sameRowsAs}'s: ${JSON.stringify(data).slice(0, 300)} … against ${JSON.stringify(other.body?.data).slice(0, 300)} …`,
        );
    }
  }
  return problems;
}
