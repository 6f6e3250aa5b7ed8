/**
 * `test/apps/<module>.test.ts` (generator-owned, rewritten when the manifest changes): the seven
 * endpoints of the resource through the app's typed client (`src/client/`, written by `core client`),
 * answered in-process by `app.inject` through `injectFetch`, as an admin, on an in-memory SQLite
 * database, plus a 422 on an invalid body. Every body and answer is typed by the app's OpenAPI
 * document, so the test compiles only against a client that matches the routes. It passes out of the
 * box in a generated project (`npm test`).
 */
import { array, call, literal, member, object, print, str, type Expr } from '../../engine/code.js';
import { Imports } from '../../engine/imports.js';
import { render } from '../../engine/render.js';
import type { AppModel } from './normalize.js';
import { testBodies } from './samples.js';

/** Where the test of an app lives in the project. */
export function resourceTestPath(module: string): string {
  return `test/apps/${module}.test.ts`;
}

/** Where the test imports the typed client from (the project's `src/client/`, see `core client`). */
export const CLIENT_IMPORT = '../../src/client/index.js';

export function renderResourceTest(app: AppModel): string {
  const { names } = app;
  const bodies = testBodies(app);
  const imports = new Imports()
    .type('fastify', 'FastifyInstance')
    .value('vitest', 'afterAll', 'beforeAll', 'describe', 'expect', 'it')
    .value('@core/runtime', 'dbManager', 'injectFetch', 'signToken')
    .value(CLIENT_IMPORT, 'createApiClient')
    .type(CLIENT_IMPORT, 'Schemas')
    .value('../../src/main.js', 'buildApp');
  // The paths of the OpenAPI document: the prefix without its trailing slash, `{id}` for the record.
  const collection = app.prefix.replace(/\/+$/, '');
  const byId = `${collection}/{id}`;
  const pk = app.primary.name;
  const createType = names.createSchema;
  const outType = names.outSchema;
  const change = bodies.change;
  const params = object([['path', object([['id', `created.${pk}`]])]]);
  const expectation = (value: Expr): string =>
    print(object([[pk, `created.${pk}`], ...(change ? [[change.name, value] as const] : [])]), 4, 48, 2);

  return render('app/resource.test.ts.hbs', {
    banner: [
      `Tests of the seven ${names.singularWords} endpoints, generated from ${app.manifestFile} and rewritten by`,
      `\`core generate ${app.module}\`: write tests of your own in another file of test/.`,
    ],
    imports: imports.render(),
    createType,
    outType,
    collection,
    pk,
    hasPrerequisites: bodies.prerequisites.length > 0,
    validBodyCall: bodies.prerequisites.length > 0 ? 'await validBody()' : 'validBody()',
    prerequisites: bodies.prerequisites.flatMap((p) => [
      statement(2, `const ${p.variable}Body: Schemas['${p.entity}Create'] = `, object(p.entries)),
      statement(
        2,
        `const ${p.variable} = `,
        member(
          call('expectStatus', clientCall('POST', p.path, object([['body', `${p.variable}Body`]])), '201'),
          'data',
        ),
      ),
    ]),
    returnLine: statement(2, 'return ', object(bodies.body)),
    hasRoundTrip: bodies.roundTrip.length > 0,
    roundTrip: statement(
      0,
      `const ROUND_TRIP: readonly (keyof ${createType} & keyof ${outType})[] = `,
      array(bodies.roundTrip.map(str)),
    ),
    getCall: clientStatement('result', 'GET', byId, object([['params', params]])),
    putCall: clientStatement(
      'result',
      'PUT',
      byId,
      object([
        ['params', params],
        ['body', change ? `{ ...body, ${change.name}: ${print(literal(change.put), 6)} }` : 'body'],
      ]),
    ),
    putExpected: expectation(change ? literal(change.put) : ''),
    patchCall: clientStatement(
      'result',
      'PATCH',
      byId,
      object([
        ['params', params],
        ['body', change ? object([[change.name, literal(change.patch)]]) : '{}'],
      ]),
    ),
    patchExpected: expectation(change ? literal(change.patch) : ''),
    changeDescription: change ? `, changing \`${change.name}\`` : ' (no field can change)',
    searchCall: clientStatement(
      'result',
      'POST',
      `${collection}/search`,
      object([
        [
          'body',
          object([
            [
              'filters',
              array([
                object([
                  ['field', str(pk)],
                  ['op', "'eq'"],
                  ['value', `created.${pk}`],
                ]),
              ]),
            ],
          ]),
        ],
      ]),
    ),
    deleteCall: clientStatement('result', 'DELETE', byId, object([['params', params]])),
    goneCall: clientStatement('gone', 'GET', byId, object([['params', params]])),
    invalidLine: statement(4, 'const invalid = ', call('JSON.stringify', literal(bodies.invalid))),
    location: `\`${collection}/\${created.${pk}}\``,
  });
}

/** `const <name> = await api.<METHOD>('<path>', <options>);` at the indentation of a test body. */
function clientStatement(name: string, method: string, path: string, options: Expr): string {
  return statement(4, `const ${name} = `, clientCall(method, path, options));
}

/** `await api.<METHOD>('<path>', <options>)`: a call of the typed client, on a path of the document. */
function clientCall(method: string, path: string, options: Expr): Expr {
  return call(`await api.${method}`, str(path), options);
}

/** `<head><expr>;` indented by `indent`, `expr` broken as the formatter would when the line is too long. */
function statement(indent: number, head: string, expr: Expr): string {
  return `${' '.repeat(indent)}${head}${print(expr, indent, indent + head.length, 1)};`;
}
