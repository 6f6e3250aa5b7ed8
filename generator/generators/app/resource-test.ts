/**
 * `test/apps/<module>.test.ts` (generator-owned, rewritten when the manifest changes): the seven
 * endpoints of the resource through `inject`, as an admin, on an in-memory SQLite database, plus a 422
 * on an invalid body. It passes out of the box in a generated project (`npm test`).
 */
import { array, literal, object, print, str, type Expr } from '../../engine/code.js';
import { Imports } from '../../engine/imports.js';
import { render } from '../../engine/render.js';
import type { AppModel } from './normalize.js';
import { testBodies } from './samples.js';

/** Where the test of an app lives in the project. */
export function resourceTestPath(module: string): string {
  return `test/apps/${module}.test.ts`;
}

export function renderResourceTest(app: AppModel): string {
  const { names } = app;
  const bodies = testBodies(app);
  const imports = new Imports()
    .type('fastify', 'FastifyInstance')
    .value('vitest', 'afterAll', 'beforeAll', 'describe', 'expect', 'it')
    .value('@core/runtime', 'dbManager', 'signToken')
    .value('../../src/main.js', 'buildApp');
  const collection = `${app.prefix.replace(/\/$/, '')}/`;
  const pk = app.primary.name;
  const change = bodies.change;
  const returnLine = `  return ${print(object(bodies.body), 2, 9, 1)};`;
  const expectation = (value: Expr): string =>
    print(object([[pk, `created.${pk}`], ...(change ? [[change.name, value] as const] : [])]), 4, 48, 2);

  return render('app/resource.test.ts.hbs', {
    banner: [
      `Tests of the seven ${names.singularWords} endpoints, generated from ${app.manifestFile} and rewritten by`,
      `\`core generate ${app.module}\`: write tests of your own in another file of test/.`,
    ],
    imports: imports.render(),
    names,
    collection,
    hasPrerequisites: bodies.prerequisites.length > 0,
    validBody:
      bodies.prerequisites.length > 0 ? 'async function validBody(): Promise<Row>' : 'function validBody(): Row',
    validBodyCall: bodies.prerequisites.length > 0 ? 'await validBody()' : 'validBody()',
    prerequisites: bodies.prerequisites.map(
      (p) =>
        `  const ${p.variable} = await create('${p.url}', ${print(object(p.entries), 2, p.variable.length + 25 + p.url.length, 2)});`,
    ),
    returnLine,
    hasRoundTrip: bodies.roundTrip.length > 0,
    roundTrip: print(array(bodies.roundTrip.map(str)), 0, 37, 1),
    pk,
    putPayload: change ? `{ ...body, ${change.name}: ${print(literal(change.put), 4)} }` : 'body',
    putExpected: expectation(change ? literal(change.put) : ''),
    patchPayload: change ? print(object([[change.name, literal(change.patch)]]), 4, 58, 3) : '{}',
    patchExpected: expectation(change ? literal(change.patch) : ''),
    changeDescription: change ? `, changing \`${change.name}\`` : ' (no field can change)',
    searchPayload: `{ filters: [{ field: '${pk}', op: 'eq', value: created.${pk} }] }`,
    invalidPayload: print(literal(bodies.invalid), 4, 58, 3),
  });
}
