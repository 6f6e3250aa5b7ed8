/**
 * Checks real responses against an OpenAPI 3.1 document, as a contract-testing tool or a gateway
 * that validates responses would: the operation is found by method and path, the status must be
 * declared, the body must match the declared media type and schema (JSON Schema 2020-12, with the
 * document's components for `$ref`), and declared headers must be present when required and match
 * their schema when sent. A request the server accepted (2xx) must be one the document accepts too:
 * its query parameters and JSON body, as a gateway that validates requests would read them. Also
 * runs `redocly lint` on a document.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Compile, type Validator } from 'typebox/schema';

type Json = Record<string, unknown>;

export interface ObservedResponse {
  method: string;
  /** The request URL (query string allowed). */
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The request's body as sent (JSON text), when it had one. */
  requestBody?: string;
}

export interface Violation {
  request: string;
  status: number;
  problem: string;
}

interface Route {
  /** The path template's segments; `{name}` matches any one segment. */
  segments: string[];
  item: Json;
}

const isParam = (segment: string): boolean => /^\{.+\}$/.test(segment);

const REPO_ROOT = join(import.meta.dirname, '../..');

export class OpenApiConformance {
  readonly violations: Violation[] = [];
  /** `<operationId> <status>` of every response checked. */
  readonly covered = new Set<string>();
  private readonly routes: Route[];
  private readonly validators = new Map<unknown, Validator>();

  /**
   * `callerDocument`: the document one caller was served, which leaves out the operations that caller
   * may not call; a 403 to a request for such an operation is then what the document promises.
   */
  constructor(
    readonly document: Json,
    private readonly options: { callerDocument?: boolean } = {},
  ) {
    const paths = document['paths'] as Record<string, Json>;
    this.routes = Object.entries(paths).map(([path, item]) => ({ segments: path.split('/'), item }));
  }

  check(response: ObservedResponse): void {
    const request = `${response.method} ${response.url}`;
    const fail = (problem: string): void => {
      this.violations.push({ request, status: response.status, problem });
    };
    const path = response.url.split('?', 1)[0]!;
    // `/tasks/` answers like `/tasks`; the document names the collection without the slash.
    const canonical = path.length > 1 ? path.replace(/\/+$/, '') : path;
    const segments = canonical.split('/');
    // The most specific template wins, as in the router: `/tasks/search` before `/tasks/{id}`.
    const route = this.routes
      .filter(
        (r) =>
          r.segments.length === segments.length &&
          r.segments.every((s, i) => (isParam(s) ? segments[i] !== '' : s === segments[i])),
      )
      .sort((a, b) => a.segments.filter(isParam).length - b.segments.filter(isParam).length)[0];
    const operation = route?.item[response.method.toLowerCase()] as Json | undefined;
    if (operation === undefined) {
      if (this.options.callerDocument === true && response.status === 403) {
        this.covered.add(`(left out) ${response.method} ${canonical} 403`);
        return;
      }
      fail('no operation in the document');
      return;
    }
    const declared = (operation['responses'] as Json)[String(response.status)] as Json | undefined;
    this.covered.add(`${String(operation['operationId'])} ${response.status}`);
    if (declared === undefined) {
      fail(`status ${response.status} is not declared`);
      return;
    }
    const resolved = this.resolve(declared);
    if (response.status >= 200 && response.status < 300) this.checkRequest(operation, response, fail);

    for (const [name, headerRef] of Object.entries((resolved['headers'] as Json | undefined) ?? {})) {
      const header = this.resolve(headerRef as Json);
      const value = response.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header['required'] === true) fail(`required header ${name} is missing`);
        continue;
      }
      const errors = this.errors(header['schema'], Array.isArray(value) ? value.join(', ') : value);
      if (errors) fail(`header ${name}: ${errors}`);
    }

    const content = resolved['content'] as Record<string, Json> | undefined;
    if (content === undefined) {
      if (response.body !== '') fail('a body where the document declares none');
      return;
    }
    const type = String(response.headers['content-type'] ?? '')
      .split(';', 1)[0]!
      .trim();
    const media = content[type];
    if (media === undefined) {
      fail(`content type ${type || '(none)'} is not declared (${Object.keys(content).join(', ')})`);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      fail('the body is not JSON');
      return;
    }
    const errors = this.errors(media['schema'], body);
    if (errors) fail(`body: ${errors}`);
  }

  /**
   * The query parameters and the JSON body of an accepted request against the operation's: a value
   * passes when one reading of it does (the text, a number, or for `style: form` without explode the
   * comma-separated list).
   */
  private checkRequest(operation: Json, response: ObservedResponse, fail: (problem: string) => void): void {
    const query = new URLSearchParams(response.url.split('?')[1] ?? '');
    for (const parameter of ((operation['parameters'] as Json[] | undefined) ?? []).map((p) => this.resolve(p))) {
      if (parameter['in'] !== 'query') continue;
      const raw = query.get(String(parameter['name']));
      if (raw === null) continue;
      const readings: unknown[] = [raw];
      if (raw.trim() !== '' && Number.isFinite(Number(raw))) readings.push(Number(raw));
      if (parameter['style'] === 'form' && parameter['explode'] === false) readings.push(raw.split(','));
      const problems = readings.map((value) => this.errors(parameter['schema'], value));
      if (!problems.includes('')) fail(`accepted query parameter ${String(parameter['name'])}=${raw}: ${problems[0]}`);
    }
    const body = operation['requestBody'] as Json | undefined;
    if (response.requestBody === undefined || body === undefined) return;
    const media = (this.resolve(body)['content'] as Record<string, Json> | undefined)?.['application/json'];
    let sent: unknown;
    try {
      sent = JSON.parse(response.requestBody);
    } catch {
      return; // not JSON: the server answered it without reading a body the document describes
    }
    const errors = media === undefined ? 'no JSON body is declared' : this.errors(media['schema'], sent);
    if (errors) fail(`accepted request body: ${errors}`);
  }

  /** Every violation, one per line (empty when the responses conform). */
  report(): string {
    return this.violations.map((v) => `${v.request} → ${v.status}: ${v.problem}`).join('\n');
  }

  private resolve(node: Json): Json {
    let current = node;
    for (let hops = 0; typeof current['$ref'] === 'string' && hops < 10; hops++) {
      const pointer = (current['$ref'] as string).replace(/^#\//, '').split('/');
      current = pointer.reduce<Json>((at, key) => at[key] as Json, this.document);
    }
    return current;
  }

  private errors(schema: unknown, value: unknown): string {
    let validator = this.validators.get(schema);
    if (validator === undefined) {
      // The components travel with the schema, so `#/components/...` references resolve.
      validator = Compile({ components: this.document['components'], ...(schema as Json) } as never);
      this.validators.set(schema, validator);
    }
    if (validator.Check(value)) return '';
    const [, errors] = validator.Errors(value);
    return errors
      .slice(0, 5)
      .map((e) => `${e.instancePath || '/'} ${e.message}`)
      .join('; ');
  }
}

export interface LintResult {
  errors: number;
  warnings: number;
  /** `rule: message` of each problem. */
  problems: string[];
}

/** `redocly lint` (recommended rules) on documents, as CI runs it: one process for all of them. */
export async function redoclyLint(documents: readonly Json[]): Promise<LintResult> {
  const dir = mkdtempSync(join(tmpdir(), 'core-openapi-'));
  try {
    const files = documents.map((document, i) => {
      const file = join(dir, `openapi-${i}.json`);
      writeFileSync(file, JSON.stringify(document));
      return file;
    });
    const bin = join(REPO_ROOT, 'node_modules/.bin/redocly');
    const run = promisify(execFile);
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    // redocly exits non-zero when it finds errors; its JSON report is on stdout either way.
    const { stdout } = await run(bin, ['lint', ...files, '--format=json'], { env, cwd: dir }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
    );
    // One JSON report per file, written one after the other.
    const reports = JSON.parse(`[${stdout.slice(stdout.indexOf('{')).replace(/\n\}\{/g, '\n},{')}]`) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    }[];
    if (reports.length !== documents.length)
      throw new Error(`redocly lint reported on ${reports.length} of ${documents.length} documents:\n${stdout}`);
    return {
      errors: reports.reduce((sum, r) => sum + r.totals.errors, 0),
      warnings: reports.reduce((sum, r) => sum + r.totals.warnings, 0),
      problems: reports.flatMap((r) => r.problems.map((p) => `${p.ruleId}: ${p.message}`)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
