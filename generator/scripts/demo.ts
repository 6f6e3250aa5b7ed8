/**
 * `npm run demo`: what a newcomer sees first. Creates a demo project with the `core` CLI (once, under
 * .tmp/demo: `core init` installs its dependencies, about a minute and a half the first time), adds the
 * starter task resource (`core startapp tasks --template`), starts it with `core run` on 127.0.0.1:8000
 * (migrations applied first), seeds three tasks and prints tokens and curl lines to try it, and how
 * to change the API while it serves (the project's README says the same).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const core = join(root, 'generator/bin/core.js');
const parent = resolve(root, process.env.CORE_DEMO_DIR ?? '.tmp');
const project = join(parent, 'demo');
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 8000);
const base = `http://${host}:${port}`;

/** Runs `core …` in `cwd`, streaming its output; exits on failure. */
function runCore(args: string[], cwd: string): string {
  const result = spawnSync(process.execPath, [core, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    process.stderr.write(result.stdout ?? '');
    console.error(`demo: \`core ${args.join(' ')}\` failed (exit ${result.status})`);
    process.exit(1);
  }
  return result.stdout.trim();
}

if (!existsSync(join(project, 'src/apps/tasks/tasks.resource.json'))) {
  mkdirSync(parent, { recursive: true });
  if (!existsSync(join(project, 'package.json'))) {
    console.log(`Creating the demo project in ${project} …`);
    spawnSync(process.execPath, [core, 'init', 'demo'], { cwd: parent, stdio: 'inherit' }).status === 0 ||
      process.exit(1);
  }
  console.log(runCore(['startapp', 'tasks', '--template'], project));
}

const server: ChildProcess = spawn(process.execPath, [core, 'run', '--host', host, '--port', String(port)], {
  cwd: project,
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => server.kill(signal));
server.once('exit', (code) => process.exit(code ?? 0));

await waitForHealth();
const admin = runCore(['token', '--role', 'admin', '--sub', 'demo-admin', '--expires', '12h'], project);
const viewer = runCore(['token', '--role', 'viewer', '--sub', 'demo-viewer', '--expires', '12h'], project);
await seed(admin);
// Let the server's log lines for the seeding requests go by first, so the banner is the last thing shown.
await new Promise((r) => setTimeout(r, 800));
console.log(`
Core demo: the task API of ${project} is listening on ${base} (docs: ${base}/docs/)

  admin token : ${admin}
  viewer token: ${viewer}   (reads only; assignee_email is masked)

  curl -s ${base}/tasks/ -H "Authorization: Bearer ${admin}"
  curl -s ${base}/tasks/ -H "Authorization: Bearer ${viewer}"
  curl -s -X POST ${base}/tasks/ -H "Authorization: Bearer ${admin}" -H 'Content-Type: application/json' -d '{"title":"Try Core","priority":"high"}'
  curl -s -X POST ${base}/tasks/search -H "Authorization: Bearer ${admin}" -H 'Content-Type: application/json' -d '{"filters":[{"field":"title","op":"ilike","value":"core"}],"sort":[{"field":"title","order":"desc"}]}'
  curl -s "${base}/tasks/?schema=true" -H "Authorization: Bearer ${viewer}"

To change the API, edit ${join(project, 'src/apps/tasks/tasks.resource.json')} (add a field),
then in another terminal:

  cd ${project} && ${generateCommand()}

The migration is applied and this server reloads with the change (see ${join(project, 'README.md')}).
Stop with Ctrl-C.`);

/**
 * How the user runs `core generate` in the demo project: the project's own CLI, as its README says;
 * a demo project made before the CLI came with projects has none, so this repository's then.
 */
function generateCommand(): string {
  return existsSync(join(project, 'node_modules/.bin/core')) ? 'npx core generate' : `node ${core} generate`;
}

async function waitForHealth(): Promise<void> {
  for (let attempt = 0; attempt < 120; attempt++) {
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  console.error(`demo: the server did not answer ${base}/health within a minute`);
  server.kill();
  process.exit(1);
}

/** Three tasks on first start, so the list is not empty. */
async function seed(token: string): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const list = (await (await fetch(`${base}/tasks/?limit=1`, { headers })).json()) as { data: unknown[] };
  if (list.data.length > 0) return;
  for (const task of [
    { title: 'Write the README', priority: 'high', assignee_email: 'ada@example.com' },
    { title: 'Review the search engine', priority: 'medium', assignee_email: 'grace@example.com' },
    { title: 'Ship 0.1', priority: 'low' },
  ]) {
    await fetch(`${base}/tasks/`, { method: 'POST', headers, body: JSON.stringify(task) });
  }
}
