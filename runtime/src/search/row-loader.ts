import type { Database } from '../db/database.js';
import { invalid } from '../model/issues.js';
import type { SearchLimits } from './limits.js';
import { PARENT_KEY, type LoaderPlan, type ObjectPlan } from './include-planner.js';
import { bucketSize, padValues, placeholders } from './sql-text.js';
import { bindParams, type LeafSources } from './where-binder.js';

type RawRow = Record<string, unknown>;
type Output = Record<string, unknown>;

/** Parent keys are grouped as strings: a uuid or integer key reads the same from the parent and the child. */
const keyOf = (raw: unknown): string => String(raw);

/** One parent key: its raw value (bound as is) and the arrays to fill, one per parent object. */
interface Parent {
  readonly raw: unknown;
  readonly arrays: unknown[][];
}

/** Parents waiting for each loader's rows, by parent key. */
class PendingLoads {
  readonly byLoader = new Map<LoaderPlan, Map<string, Parent>>();

  add(loader: LoaderPlan, parentKey: unknown, target: unknown[]): void {
    if (parentKey === null || parentKey === undefined) return;
    let parents = this.byLoader.get(loader);
    if (!parents) this.byLoader.set(loader, (parents = new Map()));
    const key = keyOf(parentKey);
    const parent = parents.get(key);
    if (parent) parent.arrays.push(target);
    else parents.set(key, { raw: parentKey, arrays: [target] });
  }
}

/** Builds one output object from a raw row. Null stays null; other values go through the column's decoder. */
function materialize(raw: RawRow, plan: ObjectPlan, pending: PendingLoads): Output {
  const out: Output = {};
  const columns = plan.columns;
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]!;
    if (c.hidden) continue;
    const v = raw[c.alias];
    out[c.key] = v === null || v === undefined ? null : c.decode ? c.decode(v) : v;
  }
  for (const j of plan.joined) {
    const present = raw[j.plan.pkAlias];
    out[j.key] = present === null || present === undefined ? null : materialize(raw, j.plan, pending);
  }
  for (const loader of plan.loaders) {
    const children: unknown[] = [];
    out[loader.key] = children;
    pending.add(loader, raw[plan.pkAlias], children);
  }
  return out;
}

/**
 * A raw row turned into its output object in place: only for a statement that selects exactly the
 * output's columns under their keys (`CompiledShape.rowsAreOutput`), where a copy would be the same
 * object with the decoded values. One object per row instead of two.
 */
function decodeInPlace(raw: RawRow, plan: ObjectPlan): Output {
  // Only the decoded columns: the statement selects every output column, so no other needs a look.
  const decoded = plan.decoded;
  for (let i = 0; i < decoded.length; i++) {
    const c = decoded[i]!;
    const v = raw[c.key];
    if (v !== null && v !== undefined) raw[c.key] = c.decode(v);
  }
  return raw;
}

/**
 * `materializeRows` without a promise, for rows that need no loader (no to-many include); null when
 * the plan has loaders, whose rows only `materializeRows` can read.
 */
export function materializeRowsSync(plan: ObjectPlan, rows: readonly RawRow[], inPlace = false): Output[] | null {
  if (!inPlace && hasLoaders(plan)) return null;
  const out = new Array<Output>(rows.length);
  if (inPlace) for (let i = 0; i < rows.length; i++) out[i] = decodeInPlace(rows[i]!, plan);
  else for (let i = 0; i < rows.length; i++) out[i] = materialize(rows[i]!, plan, NO_LOADS);
  return out;
}

/** Never added to: a plan without loaders has nothing to wait for. */
const NO_LOADS = new PendingLoads();

/** Whether building `plan`'s objects needs a select-in loader, at any depth of its joined includes. */
function hasLoaders(plan: ObjectPlan): boolean {
  return plan.loaders.length > 0 || plan.joined.some((j) => hasLoaders(j.plan));
}

/** Parent keys per statement; chunks keep the placeholder count far below both databases' limits. */
const CHUNK = 1000;

/**
 * Turns fetched rows into output rows and runs the select-in loaders their includes need: one
 * statement per to-many include (per 1000 parents), level by level. Output order = row order.
 * `sources`: the leaves the statement was bound with, whose row scopes the loaders bind too.
 * `inPlace` (a statement with `rowsAreOutput`): `rows` become the output, read nothing from them after.
 */
export async function materializeRows(
  db: Database,
  plan: ObjectPlan,
  rows: readonly RawRow[],
  limits: Readonly<SearchLimits>,
  sources: LeafSources = NO_SOURCES,
  inPlace = false,
): Promise<Output[]> {
  // A statement whose rows are the output has no loaders: nothing to wait for.
  if (inPlace) return materializeRowsSync(plan, rows, true)!;
  const pending = new PendingLoads();
  const out = new Array<Output>(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = materialize(rows[i]!, plan, pending);
  if (pending.byLoader.size > 0) await runLoaders(db, pending, limits, sources);
  return out;
}

const NO_SOURCES: LeafSources = [[]];

async function runLoaders(
  db: Database,
  pending: PendingLoads,
  limits: Readonly<SearchLimits>,
  sources: LeafSources,
): Promise<void> {
  for (const [loader, parents] of pending.byLoader) {
    const nested = new PendingLoads();
    const keys = [...parents.values()].map((p) => p.raw);
    const before = loader.headSlots ? bindParams(loader.headSlots, sources) : [];
    const after = loader.tailSlots ? bindParams(loader.tailSlots, sources) : [];
    let loaded = 0;
    for (let start = 0; start < keys.length; start += CHUNK) {
      const chunk = keys.slice(start, start + CHUNK);
      const size = bucketSize(chunk.length);
      const cap = limits.maxIncludedRows - loaded + 1;
      const sql = loader.head + placeholders(size) + loader.tail;
      const params = [...before, ...padValues(chunk, size), ...after, cap];
      const rows = db.selectSync<RawRow>(sql, params) ?? (await db.select<RawRow>(sql, params));
      loaded += rows.length;
      if (loaded > limits.maxIncludedRows) {
        throw invalid(
          loader.jsonPath,
          `including '${loader.path}' would load more than ${limits.maxIncludedRows} rows for this page; ask for a smaller page or filter the parents`,
          'include_too_large',
        );
      }
      for (const row of rows) {
        const child = materialize(row, loader.plan, nested);
        const parent = parents.get(keyOf(row[PARENT_KEY]));
        if (parent) for (const target of parent.arrays) target.push(child);
      }
    }
    await runLoaders(db, nested, limits, sources);
  }
}
