// The schema-driven request fuzzer (docs/reliability.md) against tasks: see runner.ts.
import { describeFuzz } from './runner.js';
import { TASKS_TARGET } from './targets.js';

describeFuzz(TASKS_TARGET);
