// The schema-driven request fuzzer (docs/reliability.md) against every field-type: see runner.ts.
import { describeFuzz } from './runner.js';
import { EVERY_FIELD_TYPE_TARGET } from './targets.js';

describeFuzz(EVERY_FIELD_TYPE_TARGET);
