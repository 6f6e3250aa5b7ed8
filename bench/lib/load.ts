/**
 * One autocannon run against one server: `CONNECTIONS` keep-alive connections, no pipelining, for a
 * fixed duration. req/s counts only responses with the expected 2xx status, over the measured time.
 */
import autocannon from 'autocannon';
import { CONNECTIONS } from './config.js';
import type { Endpoint, EndpointInputs } from './endpoints.js';

export interface LoadResult {
  rps: number;
  /** How long the run measured (s). */
  seconds: number;
  /** Responses with the expected 2xx status. */
  responses: number;
  p99Ms: number;
  p50Ms: number;
  /** Responses that were not 2xx, plus socket errors and timeouts: must be 0 for a valid run. */
  failures: number;
}

export function requestHeaders(endpoint: Endpoint, token: string): Record<string, string> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (endpoint.body !== undefined) headers['content-type'] = 'application/json';
  return headers;
}

export async function runLoad(
  baseUrl: string,
  endpoint: Endpoint,
  inputs: EndpointInputs,
  token: string,
  durationSeconds: number,
): Promise<LoadResult> {
  const result = await autocannon({
    url: baseUrl + endpoint.path(inputs),
    method: endpoint.method,
    headers: requestHeaders(endpoint, token),
    ...(endpoint.body !== undefined ? { body: JSON.stringify(endpoint.body) } : {}),
    connections: CONNECTIONS,
    pipelining: 1,
    duration: durationSeconds,
    timeout: 10,
  });
  const seconds = result.duration > 0 ? result.duration : durationSeconds;
  return {
    rps: result['2xx'] / seconds,
    seconds,
    responses: result['2xx'],
    p99Ms: result.latency.p99,
    p50Ms: result.latency.p50,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}
