/**
 * The script a user would write against the typed client of a generated project (`core client`),
 * copied into the e2e project as `test/client-flow.ts`: create → get with include → patch → list
 * with a cursor → search → delete, against the served app. It must type-check under the project's
 * strict tsconfig without `any` or casts: every body and response type comes from the document.
 */
export const CLIENT_FLOW = `import { createApiClient } from '../src/client/index.js';

const api = createApiClient({
  baseUrl: process.env['API_URL'] ?? 'http://127.0.0.1:8000',
  headers: { authorization: \`Bearer \${process.env['API_TOKEN'] ?? ''}\` },
});

/** The body of a successful call; a failed one stops the script with the server's error envelope. */
function ok<T, E>(result: { data?: T; error?: E; response: Response }, what: string): T {
  if (result.data === undefined) throw new Error(\`\${what}: \${result.response.status} \${JSON.stringify(result.error)}\`);
  return result.data;
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(\`unexpected: \${what}\`);
}

const project = ok(await api.POST('/projects', { body: { name: 'Apollo' } }), 'create project').data;
const created = ok(await api.POST('/tasks', { body: { title: 'Typed', project_id: project.id } }), 'create task').data;
ok(await api.POST('/tasks', { body: { title: 'Second', priority: 'low' } }), 'create another task');

const read = ok(await api.GET('/tasks/{id}', { params: { path: { id: created.id }, query: { include: 'project' } } }), 'get with include').data;
check(read.project?.name === 'Apollo', 'the included project');

const patched = ok(await api.PATCH('/tasks/{id}', { params: { path: { id: created.id } }, body: { is_completed: true } }), 'patch').data;
check(patched.is_completed && patched.title === 'Typed', 'only the patched flag changed');

const first = ok(await api.GET('/tasks', { params: { query: { limit: 1 } } }), 'list');
const cursor = first.meta?.next_cursor;
check(first.data.length === 1 && typeof cursor === 'string', 'a first page with a cursor');
const next = ok(await api.GET('/tasks', { params: { query: { limit: 1, cursor: cursor ?? '' } } }), 'next page');
check(next.data.length === 1 && next.data[0]?.id !== first.data[0]?.id, 'a second page with the other task');

const found = ok(
  await api.POST('/tasks/search', { body: { filters: [{ field: 'project.name', op: 'eq', value: 'Apollo' }], include: ['project'] } }),
  'search',
).data;
check(found.length === 1 && found[0]?.id === created.id && found[0].project?.id === project.id, 'the task found through its project');

ok(await api.DELETE('/tasks/{id}', { params: { path: { id: created.id } } }), 'delete');
const gone = await api.GET('/tasks/{id}', { params: { path: { id: created.id } } });
check(gone.response.status === 404 && gone.error?.error.code === 'NOT_FOUND', 'a 404 envelope after the delete');

console.log('client flow: ok');
`;
