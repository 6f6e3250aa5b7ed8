/**
 * The files `core init` writes for shipping: `Dockerfile`, `.dockerignore`, `compose.yaml`. Docker is
 * not needed: they are checked statically: they parse, the stages and services refer to each other
 * correctly, secrets stay out of the files and the image, migrations run once per deploy, and every
 * setting they name is one the runtime reads (with values it accepts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadSettings } from '@core/runtime';
import { core, REPO_ROOT, tempDir } from '../helpers/cli.js';

const dir = tempDir('core-shipping-');
afterAll(() => dir.remove());

interface ComposeService {
  image?: string;
  build?: { context: string; target: string };
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  deploy?: { replicas: number };
  ports?: string[];
  healthcheck?: { test: string[] };
  stop_grace_period?: string;
}

interface Stage {
  name: string;
  from: string;
  lines: string[];
}

/** The Dockerfile's stages, each with its instructions (continuation lines joined, comments dropped). */
function stagesOf(dockerfile: string): Stage[] {
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of instructions) {
    const from = /^FROM\s+(\S+)\s+AS\s+(\S+)$/i.exec(line);
    if (from) stages.push({ name: from[2]!, from: from[1]!, lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

/** Whether `.dockerignore` keeps `path` out of the build context (the pattern forms it uses: names, `*.x`, `x.*`, `!`). */
function ignored(patterns: readonly string[], path: string): boolean {
  let out = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    const pattern = negated ? raw.slice(1) : raw;
    const regex = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`);
    if (regex.test(path)) out = !negated;
  }
  return out;
}

/** `${NAME:?message}` and `${NAME}` replaced by `values[NAME]`, as `docker compose` interpolates. */
function interpolate(text: string, values: Record<string, string>): string {
  return text.replace(/\$\{([A-Z_]+)(:\?[^}]*)?\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`compose.yaml needs ${name}`);
    return values[name]!;
  });
}

/** Every `read('NAME')` of the runtime's settings modules: the settings Core reads. */
function runtimeSettingNames(): Set<string> {
  const folder = join(REPO_ROOT, 'runtime/src/settings');
  const names = new Set<string>();
  for (const file of readdirSync(folder).filter((f) => f.endsWith('.ts'))) {
    for (const match of readFileSync(join(folder, file), 'utf8').matchAll(/read\('([A-Z_]+)'\)/g)) names.add(match[1]!);
  }
  return names;
}

describe('core init: Dockerfile, .dockerignore, compose.yaml', () => {
  let project: string;
  const read = (file: string) => readFileSync(join(project, file), 'utf8');

  beforeAll(async () => {
    const result = await core(['init', 'demo', '--no-install'], { cwd: dir.path });
    expect(result.code, result.stderr).toBe(0);
    project = join(dir.path, 'demo');
  }, 180_000);

  it('the Dockerfile builds in stages: npm ci, the build, a one-shot migrate stage, and a runtime stage run by a non-root user', () => {
    const stages = stagesOf(read('Dockerfile'));
    expect(stages.map((s) => s.name)).toEqual(['deps', 'build', 'migrate', 'production-deps', 'runtime']);
    const [deps, build, migrate, production, runtime] = stages as [Stage, Stage, Stage, Stage, Stage];
    expect(deps.lines).toContain('RUN npm ci');
    expect(build.from).toBe('deps');
    expect(build.lines.some((line) => /^RUN npm run build\b/.test(line))).toBe(true);
    expect(migrate.from).toBe('build');
    expect(migrate.lines.at(-1)).toBe('CMD ["npm", "run", "migrate"]');
    expect(production.lines).toContain('RUN npm prune --omit=dev');

    // The runtime stage starts from the bare base image: no compiler, no sources, no dev dependencies.
    expect(runtime.from).toBe(deps.from);
    expect(runtime.lines.filter((line) => line.startsWith('COPY')).map((line) => line.replace(/^COPY\s+/, ''))).toEqual(
      [
        '--from=production-deps /app/node_modules ./node_modules',
        'package.json ./',
        // dist/ writable by the server's user: its code cache (scripts/build.mjs).
        '--from=build --chown=node:node /app/dist ./dist',
        '--from=build /app/migrations ./migrations',
      ],
    );
    const user = runtime.lines.findIndex((line) => line.startsWith('USER '));
    expect(runtime.lines[user]).toBe('USER node');
    expect(user).toBeLessThan(runtime.lines.findIndex((line) => line.startsWith('CMD ')));
    expect(runtime.lines).toContain('EXPOSE 8000');
  });

  it("the runtime stage runs node with the flags of the project's start script, so SIGTERM reaches the server", () => {
    const runtime = stagesOf(read('Dockerfile')).at(-1)!;
    const cmd = JSON.parse(runtime.lines.find((line) => line.startsWith('CMD '))!.slice(4)) as string[];
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    expect(cmd).toEqual(start.split(/\s+/));
    // The settings the image sets are the runtime's (NODE_ENV is Node's own).
    const env = runtime.lines.find((line) => line.startsWith('ENV '))!;
    const names = [...env.matchAll(/([A-Z_]+)=/g)].map((m) => m[1]!);
    expect(names).toEqual(['NODE_ENV', 'ENVIRONMENT', 'HOST', 'PORT']);
    const known = runtimeSettingNames();
    for (const name of names.filter((n) => n !== 'NODE_ENV')) expect(known, name).toContain(name);
  });

  it('.dockerignore keeps .env, databases, node_modules and builds out of the image, and the sources in', () => {
    const patterns = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const path of [
      '.env',
      '.env.production',
      'dev.db',
      'dev.db-wal',
      'node_modules',
      'node_modules/fastify/package.json',
      'dist/main.js',
      '.git/HEAD',
    ]) {
      expect(ignored(patterns, path), path).toBe(true);
    }
    for (const path of [
      '.env.example',
      'src/main.ts',
      'package.json',
      'package-lock.json',
      'vendor',
      'migrations/postgresql/Migration1.ts',
      'scripts/build.mjs',
      'tsconfig.build.json',
    ]) {
      expect(ignored(patterns, path), path).toBe(false);
    }
  });

  it('compose.yaml parses: PostgreSQL, NATS, a one-shot migrate service, and the app ×2 that waits for it', () => {
    const compose = parse(read('compose.yaml')) as {
      name: string;
      services: Record<string, ComposeService>;
      volumes: Record<string, unknown>;
    };
    expect(compose.name).toBe('demo');
    expect(Object.keys(compose.services).sort()).toEqual(['app', 'migrate', 'nats', 'postgres']);
    const { app, migrate, nats, postgres } = compose.services as Record<string, ComposeService>;
    const stages = stagesOf(read('Dockerfile')).map((s) => s.name);

    // Migrations run once per deploy, by `migrate` (the Dockerfile's migrate stage), never by an instance.
    expect(migrate!.build).toEqual({ context: '.', target: 'migrate' });
    expect(stages).toContain('migrate');
    expect(migrate!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(app!.build).toEqual({ context: '.', target: 'runtime' });
    expect(stages).toContain('runtime');
    expect(app!.command).toBeUndefined();
    expect(app!.depends_on).toEqual({
      migrate: { condition: 'service_completed_successfully' },
      postgres: { condition: 'service_healthy' },
      nats: { condition: 'service_healthy' },
    });
    expect(app!.deploy).toEqual({ replicas: 2 });
    expect(app!.ports).toEqual(['127.0.0.1:8001-8002:8000']);
    expect(app!.healthcheck!.test.join(' ')).toContain('http://127.0.0.1:8000/ready');
    expect(nats!.command).toContain('--jetstream');
    expect(postgres!.image).toMatch(/^postgres:\d+/);
    expect(Object.keys(compose.volumes).sort()).toEqual(['nats-data', 'postgres-data']);
    // Docker's kill comes after the drain: longer than the delay plus the grace.
    const grace = Number(/^(\d+)s$/.exec(app!.stop_grace_period!)![1]) * 1000;
    expect(grace).toBeGreaterThan(
      Number(app!.environment!.SHUTDOWN_DELAY_MS) + Number(app!.environment!.SHUTDOWN_GRACE_MS),
    );
  });

  it("compose.yaml's secrets come from the environment, and every setting it names is one the runtime reads and accepts", () => {
    const text = read('compose.yaml');
    expect(text).toMatch(/SECRET_KEY: \$\{SECRET_KEY:\?[^}]+\}/);
    expect(text.match(/\$\{POSTGRES_PASSWORD:\?[^}]+\}/g)).toHaveLength(2);

    const values = { SECRET_KEY: 'f'.repeat(64), POSTGRES_PASSWORD: 'pw' };
    const compose = parse(interpolate(text, values)) as { services: Record<string, ComposeService> };
    const env = compose.services.app!.environment!;
    expect(compose.services.migrate!.environment).toEqual(env);
    const known = runtimeSettingNames();
    for (const name of Object.keys(env)) expect(known, `${name} is not a setting of the runtime`).toContain(name);

    const settings = loadSettings({ cwd: dir.path, env });
    expect(settings).toMatchObject({
      environment: 'production',
      projectName: 'demo',
      databaseUrl: 'postgresql://app:pw@postgres:5432/demo',
      database: { poolMax: 10, poolTimeoutMs: 5000, statementTimeoutMs: 30_000 },
      shutdown: { delayMs: 2000, graceMs: 10_000 },
      events: { url: 'nats://nats:4222' },
      logLevel: 'info',
    });
    expect(settings.secretKey).toBe(values.SECRET_KEY);
  });
});
