/**
 * An identity provider for tests: key pairs made with node:crypto, exported as JWKs and served as a
 * key set by a real HTTP server on 127.0.0.1 (a free port), plus token signing with jose.
 *
 * The server can be switched to answer with an error, to hang (accept the request and never answer)
 * or to go down (stop listening, so connections are refused) and come back on the same port.
 */
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SignJWT } from 'jose';

export type TestAlgorithm = 'RS256' | 'PS256' | 'ES256' | 'EdDSA';

export interface TestKey {
  kid: string;
  alg: TestAlgorithm;
  privateKey: KeyObject;
  /** The public key as published in the key set. */
  jwk: Record<string, unknown>;
}

export const ISSUER = 'https://id.example.test/realms/core';
export const AUDIENCE = 'core-api';

export function makeKey(alg: TestAlgorithm, kid = `${alg.toLowerCase()}-${randomUUID().slice(0, 8)}`): TestKey {
  const { publicKey, privateKey } =
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : alg === 'EdDSA'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, alg, privateKey, jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' } };
}

const now = (): number => Math.floor(Date.now() / 1000);

export interface SignOptions {
  /** Replaces the default claims (iss, aud, sub, exp in 10 minutes, iat); `undefined` values drop one. */
  claims?: Record<string, unknown>;
  /** Header entries on top of `{ alg, kid, typ: 'JWT' }`; `kid: undefined` leaves the kid out. */
  header?: Record<string, unknown>;
}

/** A token signed with `key` carrying `extra` claims beside the defaults. */
export async function signWith(
  key: TestKey,
  extra: Record<string, unknown> = {},
  options: SignOptions = {},
): Promise<string> {
  const claims: Record<string, unknown> = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'user-1',
    iat: now(),
    exp: now() + 600,
    ...extra,
    ...options.claims,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  const header: Record<string, unknown> = { alg: key.alg, kid: key.kid, typ: 'JWT', ...options.header };
  if (header['kid'] === undefined) delete header['kid'];
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key.privateKey);
}

/** An unsigned token (`alg: none`, empty signature), which no verifier may accept. */
export function unsignedToken(claims: Record<string, unknown>, kid?: string): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT', ...(kid === undefined ? {} : { kid }) })}.${part({ iss: ISSUER, aud: AUDIENCE, exp: now() + 600, ...claims })}.`;
}

export const inSeconds = (seconds: number): number => now() + seconds;

export type JwksMode = 'ok' | 'error' | 'hang';

export class JwksServer {
  /** Key sets served so far (each request counts, whatever the mode). */
  requests = 0;
  mode: JwksMode = 'ok';
  private keys: TestKey[];
  private readonly server = createServer((_request, response) => this.answer(response));
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<ServerResponse>();
  private port = 0;

  private constructor(keys: TestKey[]) {
    this.keys = keys;
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(keys: TestKey[]): Promise<JwksServer> {
    const jwks = new JwksServer(keys);
    await jwks.listen();
    return jwks;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/.well-known/jwks.json`;
  }

  /** Serves exactly these keys from now on. */
  publish(...keys: TestKey[]): void {
    this.keys = keys;
  }

  /** Stops listening and drops every connection: fetches are refused until `up()`. */
  async down(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.dropConnections();
    await closed;
  }

  /** Listens again on the same port. */
  async up(): Promise<void> {
    await this.listen();
  }

  async close(): Promise<void> {
    await this.down();
    this.dropConnections();
  }

  private async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
  }

  private dropConnections(): void {
    this.hanging.clear();
    for (const socket of this.sockets) socket.destroy();
  }

  private answer(response: ServerResponse): void {
    this.requests += 1;
    if (this.mode === 'hang') {
      this.hanging.add(response);
      return;
    }
    if (this.mode === 'error') {
      response.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ keys: this.keys.map((key) => key.jwk) }));
  }
}
