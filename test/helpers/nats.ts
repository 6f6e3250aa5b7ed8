/**
 * Suites that need a NATS JetStream server (`nats-server.ts` starts a private one): without the
 * binary they are skipped with a printed reason, except in CI (`CI=true`), where they fail, as the
 * PostgreSQL suites do (`databases.ts`).
 */
import { describe, it } from 'vitest';
import { IN_CI } from './databases.js';
import { natsUnavailable } from './nats-server.js';

export { eventually, freePort, inspector, natsUnavailable, startNats } from './nats-server.js';
export type { NatsServer, StoredMessage } from './nats-server.js';

/** `describe` when nats-server is available; otherwise skipped with a printed reason, or failing in CI. */
export function describeWithNats(title: string, body: () => void): void {
  if (!natsUnavailable) {
    describe(title, body);
    return;
  }
  if (IN_CI) {
    describe(title, () => {
      it('needs nats-server in CI', () => {
        throw new Error(`${natsUnavailable} — CI must run the event broker suites`);
      });
    });
    return;
  }
  console.warn(`[skip] ${title}: ${natsUnavailable}`);
  describe.skip(title, body);
}
