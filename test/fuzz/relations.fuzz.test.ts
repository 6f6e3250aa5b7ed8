// The schema-driven request fuzzer (docs/reliability.md) against relations: see runner.ts.
import { describeFuzz } from './runner.js';
import { RELATIONS_TARGET } from './targets.js';

describeFuzz(RELATIONS_TARGET);
