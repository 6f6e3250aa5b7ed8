/**
 * Search limits: resolving a configuration (defaults, checks, one shared object per configuration)
 * and keeping engines with different limits apart in the statement cache.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SEARCH_LIMITS, ModelReader, SearchEngine, ValidationError } from '@core/runtime';
import { resolveSearchLimits } from '../../runtime/src/search/limits.js';
import { fixtureEntities, Task } from '../../fixtures/models/index.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { rejectsWithoutSql, seedGraph } from './search-fixtures.js';

describe('resolveSearchLimits', () => {
  it('fills the defaults and freezes the result', () => {
    const limits = resolveSearchLimits({ maxLimit: 100, defaultLimit: 20, maxSortKeys: undefined });
    expect(limits).toEqual({ ...DEFAULT_SEARCH_LIMITS, maxLimit: 100, defaultLimit: 20 });
    expect(Object.isFrozen(limits)).toBe(true);
    expect(resolveSearchLimits()).toEqual(DEFAULT_SEARCH_LIMITS);
  });

  it('gives equal configurations one shared object, however they are written', () => {
    expect(resolveSearchLimits({ maxLimit: 100, defaultLimit: 20 })).toBe(
      resolveSearchLimits({ defaultLimit: 20, maxLimit: 100 }),
    );
    expect(resolveSearchLimits({})).toBe(resolveSearchLimits());
    expect(resolveSearchLimits({ maxLimit: DEFAULT_SEARCH_LIMITS.maxLimit })).toBe(resolveSearchLimits());
    expect(resolveSearchLimits({ maxLimit: 100, defaultLimit: 20 })).not.toBe(
      resolveSearchLimits({ maxLimit: 100, defaultLimit: 21 }),
    );
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['an unknown limit', { maxRows: 5 }, /Unknown search limit "maxRows": use one of maxFilterNodes, /],
    ['zero', { maxInList: 0 }, /"maxInList" must be a positive integer, got 0/],
    ['a fraction', { maxLimit: 2.5 }, /"maxLimit" must be a positive integer, got 2.5/],
    ['a string', { maxLimit: '50' }, /"maxLimit" must be a positive integer, got 50/],
    ['null', { maxIncludes: null }, /"maxIncludes" must be a positive integer, got null/],
    ['a default page above the largest', { defaultLimit: 600 }, /defaultLimit \(600\) is above maxLimit \(500\)/],
  ])('refuses %s', (_name, partial, message) => {
    expect(() => resolveSearchLimits(partial as never)).toThrow(message);
    // A refused configuration is not remembered: asking again fails again.
    expect(() => resolveSearchLimits(partial as never)).toThrow(message);
  });
});

describeEachDatabase('search limits per engine', { entities: fixtureEntities }, (suite) => {
  beforeAll(async () => {
    await seedGraph(suite.db);
  });

  it('engines with other limits never share a compiled statement', async () => {
    const loose = new SearchEngine(suite.db, Task);
    const tight = new SearchEngine(suite.db, Task, { limits: { maxStringLength: 3 } });
    const request = { filters: [{ field: 'title', op: 'eq' as const, value: 'abcd' }] };
    // The same shape, compiled first for the loose engine, then for the tight one, and the other way round.
    await expect(loose.search(request)).resolves.toMatchObject({ items: [] });
    expect(await rejectsWithoutSql(suite.db, () => tight.search(request), ValidationError)).toMatchObject({
      path: 'filters[0].value',
      reason: 'value_too_long',
    });
    const other = { filters: [{ field: 'description', op: 'eq' as const, value: 'abcd' }] };
    await rejectsWithoutSql(suite.db, () => tight.search(other), ValidationError);
    await expect(loose.search(other)).resolves.toMatchObject({ items: [] });
    // Equal limits written differently are one configuration.
    const reader = new ModelReader(suite.db, Task, { limits: { maxStringLength: 3 } });
    expect(reader.engine.limits).toBe(
      new ModelReader(suite.db, Task, { maxLimit: 500, limits: { maxStringLength: 3 } }).engine.limits,
    );
    await rejectsWithoutSql(suite.db, () => reader.search(request), ValidationError);
  });
});
