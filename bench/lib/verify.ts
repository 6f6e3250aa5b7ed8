/**
 * Before measuring: every endpoint is requested once from every server and the answers compared, so a
 * ratio never compares different work (different rows, a 4xx, a missing field). Reads must return the
 * same `data`; `meta` must have the same keys (cursors differ by design); a create must answer 201
 * with the same fields and a `Location` header.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ServerName } from './config.js';
import { ENDPOINTS, type Endpoint, type EndpointInputs } from './endpoints.js';
import { requestHeaders } from './load.js';

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

async function ask(target: Target, endpoint: Endpoint, token: string): Promise<Answer> {
  const res = await fetch(target.baseUrl + endpoint.path(target.inputs), {
    method: endpoint.method,
    headers: requestHeaders(endpoint, token),
    ...(endpoint.body !== undefined ? { body: JSON.stringify(endpoint.body) } : {}),
  });
  const text = await res.text();
  let body: Answer['body'] = null;
  try {
    body = JSON.parse(text) as Answer['body'];
  } catch {
    // reported below as a mismatch
  }
  return { status: res.status, body, location: res.headers.get('location'), vary: res.headers.get('vary') };
}

function keysOf(value: unknown): string {
  const row = Array.isArray(value) ? value[0] : value;
  return row && typeof row === 'object' ? Object.keys(row).join(',') : typeof row;
}

/** Returns one line per problem; empty when the three servers agree on every endpoint. */
export async function verifyServers(targets: readonly Target[], tokens: Record<'admin' | 'viewer', string>): Promise<string[]> {
  const problems: string[] = [];
  for (const endpoint of ENDPOINTS) {
    const answers = await Promise.all(targets.map((t) => ask(t, endpoint, tokens[endpoint.role])));
    const reference = answers[0]!;
    answers.forEach((answer, i) => {
      const who = `${endpoint.name} on ${targets[i]!.name}`;
      if (answer.status !== endpoint.status) problems.push(`${who}: status ${answer.status}, expected ${endpoint.status}`);
      if (!answer.body) return void problems.push(`${who}: the body is not JSON`);
      const data = answer.body.data;
      if (endpoint.writes) {
        if (keysOf(data) !== keysOf(reference.body?.data)) problems.push(`${who}: fields ${keysOf(data)} differ from ${keysOf(reference.body?.data)}`);
        if (!answer.location) problems.push(`${who}: no Location header`);
      } else if (!isDeepStrictEqual(data, reference.body?.data)) {
        problems.push(`${who}: data differs from ${targets[0]!.name}'s`);
      }
      const metaKeys = keysOf(answer.body.meta);
      if (metaKeys !== keysOf(reference.body?.meta)) problems.push(`${who}: meta ${metaKeys} differs`);
      if (endpoint.role === 'viewer' && !/authorization/i.test(answer.vary ?? '')) problems.push(`${who}: no Vary: Authorization`);
      if (endpoint.role === 'viewer' && keysOf(data).includes('assignee_email')) problems.push(`${who}: a restricted field is visible`);
    });
  }
  return problems;
}
