// Starts Platformatic DB 2.61 on the bench's copy of the data, the way its docs start one service:
// `buildServer(config)` then `start()`, REST only (the bench sends no GraphQL), no migrations, no
// file watching. The bench passes PORT, DATABASE_URL (`sqlite:<path>` or `postgresql://…`) and
// LOG_LEVEL; SIGTERM closes it.
import { buildServer } from '@platformatic/db';

const url = process.env.DATABASE_URL ?? '';
const postgres = /^postgres(ql)?:\/\//.test(url);
if (!postgres && !url.startsWith('sqlite:'))
  throw new Error(`DATABASE_URL must be sqlite:<path> or postgresql://…, got ${url}`);

const app = await buildServer({
  server: {
    hostname: process.env.HOST ?? '127.0.0.1',
    port: Number(process.env.PORT),
    logger: { level: process.env.LOG_LEVEL ?? 'info' },
  },
  db: {
    connectionString: postgres ? url : `sqlite://${url.slice('sqlite:'.length)}`,
    // The size of the other servers' PostgreSQL pools; SQLite has one connection whatever this says.
    poolSize: 10,
    graphql: false,
    openapi: true,
  },
  watch: false,
});
await app.start();

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    void app.close().finally(() => process.exit(0));
  });
}
