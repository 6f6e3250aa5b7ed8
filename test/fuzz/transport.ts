/**
 * Requests that go wrong before any handler runs: URLs no route serves (404), methods a known URL
 * does not serve (405, with `Allow`), malformed percent-encoding (400), ids that are not ids (422 on
 * `params.id`) or too long (414), bodies that are not JSON (400), JSON with prototype-poisoning keys
 * (400), other media types (415), bodies over 1 MiB (413), and an empty body where one is needed.
 */
import fc from 'fast-check';
import type { Caller, Fuzzed } from './harness.js';
import { gate, withCaller, type Case, type Expectation } from './oracle.js';
import type { Resource } from './resources.js';

export type TransportFault =
  | { readonly kind: 'malformed_json'; readonly route: BodyRoute; readonly text: string }
  | { readonly kind: 'proto_key'; readonly route: BodyRoute; readonly text: string }
  | { readonly kind: 'media_type'; readonly route: BodyRoute; readonly contentType: string | null }
  | { readonly kind: 'too_large'; readonly route: BodyRoute }
  | { readonly kind: 'empty_body'; readonly route: BodyRoute }
  | { readonly kind: 'method'; readonly method: string; readonly suffix: '' | '/{id}' | '/search' }
  | { readonly kind: 'unknown_route'; readonly path: string }
  | { readonly kind: 'bad_url'; readonly path: string }
  | { readonly kind: 'bad_id'; readonly method: string; readonly id: string }
  | { readonly kind: 'long_id'; readonly method: string; readonly length: number };

export type BodyRoute = 'create' | 'replace' | 'patch' | 'search';

export interface TransportPlan {
  readonly op: 'transport';
  readonly caller: string;
  readonly resource: string;
  readonly fault: TransportFault;
}

const BAD_JSON = [
  '{x',
  '{"a":1,}',
  '[1,2',
  "{'a':1}",
  'NaN',
  '{"a":1}{"b":2}',
  '{"a":"\\x41"}',
  '{"a": 01}',
  'undefined',
  ' ',
  '{"a":"\u0000"}',
  '{"a":1',
];
const PROTO = [
  '{"__proto__":{"admin":true}}',
  '{"a":1,"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"filters":[{"__proto__":{}}]}',
];
const MEDIA = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  'application/xml',
  'text/json',
  'application/json-patch+json',
  null,
];
const BAD_IDS = [
  'not-a-uuid',
  '123',
  '%00',
  '%20',
  '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f2',
  '3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21x',
  'g'.repeat(36),
  '3f1e4a52_7c1b_4d2e_9a8f_0b6c5d4e3f21',
  'urn:uuid:3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21',
  '%7B3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21%7D',
  'null',
];

export function transportPlanArb(resource: Resource, caller: fc.Arbitrary<string>): fc.Arbitrary<TransportPlan> {
  const route = fc.constantFrom<BodyRoute>('create', 'replace', 'patch', 'search');
  const served = new Map<string, Set<string>>();
  for (const op of resource.operations) served.set(op.suffix, (served.get(op.suffix) ?? new Set()).add(op.method));
  const wrongMethods: { method: string; suffix: '' | '/{id}' | '/search' }[] = [];
  for (const suffix of ['', '/{id}', '/search'] as const) {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
      if (!served.get(suffix)?.has(method)) wrongMethods.push({ method, suffix });
  }
  const fault: fc.Arbitrary<TransportFault> = fc.oneof(
    fc
      .tuple(route, fc.constantFrom(...BAD_JSON))
      .map(([r, text]): TransportFault => ({ kind: 'malformed_json', route: r, text })),
    fc
      .tuple(route, fc.constantFrom(...PROTO))
      .map(([r, text]): TransportFault => ({ kind: 'proto_key', route: r, text })),
    fc
      .tuple(route, fc.constantFrom(...MEDIA))
      .map(([r, contentType]): TransportFault => ({ kind: 'media_type', route: r, contentType })),
    { weight: 1, arbitrary: route.map((r): TransportFault => ({ kind: 'too_large', route: r })) },
    route.map((r): TransportFault => ({ kind: 'empty_body', route: r })),
    fc.constantFrom(...wrongMethods).map((m): TransportFault => ({ kind: 'method', ...m })),
    fc
      .constantFrom(
        `${resource.prefix}x`,
        `${resource.prefix}/3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21/comments`,
        '/nope',
        `${resource.prefix}/search/x`,
        '/',
      )
      .map((path): TransportFault => ({ kind: 'unknown_route', path })),
    fc
      .constantFrom(`${resource.prefix}/%`, `${resource.prefix}/%E0%A4%A`, `${resource.prefix}/%zz`)
      .map((path): TransportFault => ({ kind: 'bad_url', path })),
    fc
      .tuple(fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE'), fc.constantFrom(...BAD_IDS))
      .map(([method, id]): TransportFault => ({ kind: 'bad_id', method, id })),
    fc
      .tuple(fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE'), fc.integer({ min: 101, max: 5000 }))
      .map(([method, length]): TransportFault => ({ kind: 'long_id', method, length })),
  );
  return fc.record({ op: fc.constant('transport' as const), caller, resource: fc.constant(resource.name), fault });
}

const ROUTE: Record<BodyRoute, { method: string; suffix: string; action: 'create' | 'update' | 'listview' }> = {
  create: { method: 'POST', suffix: '/', action: 'create' },
  replace: { method: 'PUT', suffix: '/3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21', action: 'update' },
  patch: { method: 'PATCH', suffix: '/3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21', action: 'update' },
  search: { method: 'POST', suffix: '/search', action: 'listview' },
};

export function prepareTransport(fz: Fuzzed, plan: TransportPlan): Case {
  const resource = fz.resource(plan.resource);
  const caller = fz.caller(plan.caller);
  const f = plan.fault;
  const label = `transport: ${f.kind}${'route' in f ? ` (${f.route})` : ''}`;
  const headers = withCaller(caller);
  switch (f.kind) {
    case 'malformed_json':
    case 'proto_key':
    case 'media_type':
    case 'too_large':
    case 'empty_body': {
      const r = ROUTE[f.route];
      const url = `${resource.prefix}${r.suffix}`;
      if (f.kind === 'media_type') {
        if (f.contentType !== null) headers['content-type'] = f.contentType;
        return {
          label,
          request: { method: r.method, url, headers, payload: '{}' },
          expect: {
            status: 415,
            why: `a body sent as ${f.contentType ?? 'no media type'}`,
            paths: ['headers.content-type'],
          },
        };
      }
      headers['content-type'] = 'application/json';
      if (f.kind === 'too_large') {
        const payload = JSON.stringify({ filler: 'x'.repeat(1024 * 1024) });
        return {
          label,
          request: { method: r.method, url, headers, payload },
          expect: { status: 413, why: 'a body over 1 MiB', paths: [''] },
        };
      }
      if (f.kind === 'empty_body')
        return {
          label,
          request: { method: r.method, url, headers, payload: '' },
          expect: emptyBody(resource, f.route, r.action, caller),
        };
      return {
        label,
        request: { method: r.method, url, headers, payload: f.text },
        expect: {
          status: 400,
          why: f.kind === 'proto_key' ? 'a prototype-poisoning key' : 'the body is not JSON',
          paths: [''],
        },
      };
    }
    case 'method': {
      const url =
        f.suffix === ''
          ? `${resource.prefix}/`
          : f.suffix === '/search'
            ? `${resource.prefix}/search`
            : `${resource.prefix}/3f1e4a52-7c1b-4d2e-9a8f-0b6c5d4e3f21`;
      const allowed = resource.operations.filter((o) => o.suffix === f.suffix).map((o) => o.method);
      const expect: Expectation = {
        status: 405,
        why: `${f.method} is not served on ${resource.prefix}${f.suffix || '/'}`,
        verify: (res) => {
          const allow = String(res.headers['allow'] ?? '')
            .split(',')
            .map((m) => m.trim())
            .filter(Boolean);
          const missing = allowed.filter((m) => !allow.includes(m));
          const wrong = allow.filter((m) => m !== 'HEAD' && m !== 'OPTIONS' && !allowed.includes(m));
          return missing.length || wrong.length
            ? [`Allow: ${allow.join(', ') || '(none)'}; the URL serves ${allowed.join(', ')}`]
            : [];
        },
      };
      return { label: `${label} ${f.method} ${f.suffix || '/'}`, request: { method: f.method, url, headers }, expect };
    }
    case 'unknown_route':
      return {
        label,
        request: { method: 'GET', url: f.path, headers },
        expect: { status: 404, why: 'no route has this URL' },
      };
    case 'bad_url':
      return {
        label,
        request: { method: 'GET', url: f.path, headers },
        expect: { status: 400, why: 'the URL is not valid percent-encoding' },
      };
    case 'bad_id':
    case 'long_id': {
      const id = f.kind === 'bad_id' ? f.id : 'a'.repeat(f.length);
      const withBody = f.method === 'PUT' || f.method === 'PATCH';
      const request = {
        method: f.method,
        url: `${resource.prefix}/${id}`,
        headers: withBody ? { ...headers, 'content-type': 'application/json' } : headers,
        ...(withBody ? { payload: '{}' } : {}),
      };
      const expect: Expectation =
        f.kind === 'long_id'
          ? { status: 414, why: `an id of ${f.length} characters`, paths: ['params.id'] }
          : { status: 422, why: `${JSON.stringify(decodeURIComponent(id))} is not a UUID`, paths: ['params.id'] };
      return { label: `${label} ${f.method}`, request, expect };
    }
  }
}

/** An empty JSON body: a write has no object to read (422), a search reads it as `{}`. */
function emptyBody(
  resource: Resource,
  route: BodyRoute,
  action: 'create' | 'update' | 'listview',
  caller: Caller,
): Expectation {
  const denied = gate(caller, resource, action);
  if (denied) return denied;
  if (route === 'search') return { status: 200, why: 'an empty search body is an empty search' };
  return { status: 422, why: 'a write needs a JSON object', paths: [''] };
}
