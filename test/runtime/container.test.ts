import { describe, expect, it } from 'vitest';
import {
  CaptiveDependencyError,
  Container,
  CycleError,
  Inject,
  type Lifetime,
  MissingRegistrationError,
  RegistrationError,
  ScopeDisposedError,
  ScopeRequiredError,
  container as defaultContainer,
  createToken,
  currentScope,
  type Logger,
} from '@core/runtime';

/** A logger that keeps what was logged at error level. */
function recordingLogger(): Logger & { errors: Array<{ obj: unknown; msg?: string }> } {
  const errors: Array<{ obj: unknown; msg?: string }> = [];
  return { errors, debug() {}, info() {}, warn() {}, error: (obj, msg) => void errors.push({ obj, msg }) };
}

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}

describe('registration is checked when it is made', () => {
  class Service {}
  const cases: Array<[string, (c: Container) => unknown, RegExp]> = [
    [
      'number token',
      (c) => c.register(42 as never, { useValue: 1 }),
      /token must be a class, a non-empty string or a symbol; received number 42/,
    ],
    ['empty string token', (c) => c.register('', { useValue: 1 }), /received the string ""/],
    [
      'options not an object',
      (c) => c.register(Service, 'scoped' as never),
      /options for Service must be an object.*received the string "scoped"/,
    ],
    [
      'unknown option (typo)',
      (c) => c.register(Service, { lifetime: 'scoped', useclass: Service } as never),
      /Unknown option "useclass" for Service/,
    ],
    [
      'unknown lifetime',
      (c) => c.register(Service, { lifetime: 'request' } as never),
      /Unknown lifetime the string "request" for Service; use one of 'singleton', 'scoped', 'transient'/,
    ],
    [
      'two sources',
      (c) => c.register(Service, { useClass: Service, useValue: new Service() } as never),
      /Service has useClass and useValue; give exactly one/,
    ],
    [
      'scoped value',
      (c) => c.register('config', { useValue: {}, lifetime: 'scoped' } as never),
      /"config" uses useValue with lifetime 'scoped'/,
    ],
    [
      'factory not a function',
      (c) => c.register('config', { useFactory: 3 } as never),
      /useFactory for "config" must be a function; received number 3/,
    ],
    [
      'useClass not a class',
      (c) => c.register(Service, { useClass: 'Service' } as never),
      /useClass for Service must be a class/,
    ],
    [
      'string token without provider',
      (c) => c.register('config' as never),
      /"config" is not a class, so it needs a provider/,
    ],
    [
      'short form with another lifetime',
      (c) => c.scoped(Service, { useClass: Service, lifetime: 'singleton' } as never),
      /scoped\(Service\) was given lifetime singleton/,
    ],
  ];
  it.each(cases)('%s', (_, register, message) => {
    const error = thrown(() => register(new Container()));
    expect(error).toBeInstanceOf(RegistrationError);
    expect(error.message).toMatch(message);
  });

  it('accepts every well-formed form and is chainable', () => {
    const c = new Container();
    const token = Symbol('clock');
    expect(
      c
        .register(Service)
        .register('a', { useValue: 1 })
        .register(token, { lifetime: 'singleton', useFactory: () => 2 })
        .singleton(class A {})
        .transient('b', { useFactory: () => 3 }),
    ).toBe(c);
    expect([c.has(Service), c.has('a'), c.has(token), c.has('missing')]).toEqual([true, true, true, false]);
  });
});

describe('lifetimes', () => {
  class Counter {
    static made = 0;
    readonly n = ++Counter.made;
  }

  const table: Array<[Lifetime, { sameInScope: boolean; sameAcrossScopes: boolean }]> = [
    ['singleton', { sameInScope: true, sameAcrossScopes: true }],
    ['scoped', { sameInScope: true, sameAcrossScopes: false }],
    ['transient', { sameInScope: false, sameAcrossScopes: false }],
  ];
  it.each(table)('%s', async (lifetime, expected) => {
    const c = new Container().register(Counter, { lifetime });
    const one = c.createScope();
    const two = c.createScope();
    const [a, b] = one.run(() => [Inject(Counter), Inject(Counter)]);
    const other = two.resolve(Counter);
    expect(a === b).toBe(expected.sameInScope);
    expect(a === other).toBe(expected.sameAcrossScopes);
  });

  it('a class registered without options is its own transient implementation', () => {
    const c = new Container().register(Counter);
    const a = c.resolve(Counter);
    expect(a).toBeInstanceOf(Counter);
    expect(c.resolve(Counter)).not.toBe(a);
  });

  it('useClass, useFactory and useValue with class, string, symbol and typed tokens', () => {
    abstract class Clock {
      abstract now(): number;
    }
    class FixedClock extends Clock {
      now() {
        return 7;
      }
    }
    const GREETING = createToken<{ text: string }>('Greeting');
    const c = new Container()
      .singleton(Clock, { useClass: FixedClock })
      .register('port', { useValue: 8000 })
      .register(GREETING, {
        lifetime: 'transient',
        useFactory: (r) => ({ text: `t=${r.resolve(Clock).now()} port=${Inject<number>('port')}` }),
      });
    expect(c.resolve(Clock)).toBeInstanceOf(FixedClock);
    expect(c.resolve<number>('port')).toBe(8000);
    const greeting = c.resolve(GREETING);
    expect(greeting.text).toBe('t=7 port=8000');
  });

  it('registering a token again replaces it', () => {
    const c = new Container().register('mode', { useValue: 'real' }).register('mode', { useValue: 'fake' });
    expect(c.resolve('mode')).toBe('fake');
  });
});

describe('Inject', () => {
  class Repository {}
  class Service {
    // Field initializers run during construction too.
    readonly clock = Inject<string>('clock');
    constructor(readonly repo = Inject(Repository)) {}
  }

  it('resolves constructor defaults in the scope the container is building into', () => {
    const c = new Container().scoped(Repository).scoped(Service).register('clock', { useValue: 'utc' });
    const scope = c.createScope();
    const service = scope.resolve(Service); // no AsyncLocalStorage involved: scope.resolve outside run()
    expect(service.repo).toBe(scope.resolve(Repository));
    expect(service.clock).toBe('utc');
    expect(c.createScope().resolve(Service).repo).not.toBe(service.repo);
  });

  it('works as a default parameter, from the active scope, across awaits', async () => {
    const c = new Container().scoped(Repository);
    const handler = async (_req: unknown, repo = Inject(Repository)) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return [repo, Inject(Repository)];
    };
    const scope = c.createScope();
    const [first, again] = await scope.run(() => handler({}));
    expect(first).toBe(again);
    expect(first).toBe(scope.resolve(Repository));
  });

  it('outside any scope resolves singletons and transients, and refuses scoped ones by name', () => {
    const c = new Container()
      .singleton(Repository)
      .transient('id', { useFactory: () => Math.random() })
      .scoped(Service);
    expect(currentScope()).toBeUndefined();
    expect(c.resolve(Repository)).toBe(c.resolve(Repository));
    expect(typeof c.resolve('id')).toBe('number');
    const error = thrown(() => c.resolve(Service));
    expect(error).toBeInstanceOf(ScopeRequiredError);
    expect(error.message).toMatch(/^Service is scoped and no scope is active\. .*runInScope/);
  });

  it('uses the default container outside any scope or construction', () => {
    class OnlyInDefault {}
    defaultContainer.register(OnlyInDefault, { lifetime: 'singleton' });
    expect(Inject(OnlyInDefault)).toBe(defaultContainer.resolve(OnlyInDefault));
    expect(() => new Container().resolve(OnlyInDefault)).toThrow(MissingRegistrationError);
  });

  it('inside a construction uses the container that is constructing', () => {
    class Leaf {}
    class Root {
      constructor(readonly leaf = Inject(Leaf)) {}
    }
    const a = new Container().transient(Root).singleton(Leaf);
    const b = new Container().transient(Root).singleton(Leaf);
    expect(b.resolve(Root).leaf).toBe(b.resolve(Leaf));
    expect(a.resolve(Root).leaf).not.toBe(b.resolve(Leaf));
  });
});

describe('resolution errors name the classes', () => {
  class C {}
  class B {
    constructor(readonly c = Inject(C)) {}
  }
  class A {
    constructor(readonly b = Inject(B)) {}
  }

  it('missing registration shows the resolution path', () => {
    const error = thrown(() => new Container().transient(A).transient(B).resolve(A)) as MissingRegistrationError;
    expect(error).toBeInstanceOf(MissingRegistrationError);
    expect(error.message).toMatch(
      /^No registration for C \(resolving A → B → C\)\. Register it first, e\.g\. container\.register\(C/,
    );
    expect(error.path).toEqual(['A', 'B', 'C']);
  });

  it.each(['singleton', 'scoped', 'transient'] as const)('a cycle is reported as Cycle: X → Y → X (%s)', (lifetime) => {
    class X {
      constructor(readonly y: unknown = Inject(Y)) {}
    }
    class Y {
      constructor(readonly x: unknown = Inject(X)) {}
    }
    class Entry {
      constructor(readonly x = Inject(X)) {}
    }
    const c = new Container().register(X, { lifetime }).register(Y, { lifetime }).transient(Entry);
    const direct = thrown(() => c.createScope().resolve(X)) as CycleError;
    expect(direct).toBeInstanceOf(CycleError);
    expect(direct.message).toMatch(/^Cycle: X → Y → X\. Break it/);
    expect(direct.path).toEqual(['X', 'Y', 'X']);
    const nested = thrown(() => c.createScope().resolve(Entry));
    expect(nested.message).toMatch(/^Cycle: X → Y → X \(resolving Entry → X → Y → X\)/);
  });

  it('a factory asking for its own token is a cycle', () => {
    const c = new Container().singleton('self', { useFactory: (r) => r.resolve('self') });
    expect(thrown(() => c.resolve('self')).message).toMatch(/^Cycle: "self" → "self"/);
  });

  const captive: Array<[string, (c: Container) => void, RegExp]> = [
    ['singleton → scoped', (c) => c.singleton(A).scoped(B).transient(C), /^Singleton A cannot depend on scoped B:/],
    [
      'singleton → transient → scoped',
      (c) => c.singleton(A).transient(B).scoped(C),
      /^Singleton A cannot depend on scoped C \(resolving A → B → C\)/,
    ],
  ];
  it.each(captive)('a singleton may not capture a scoped service: %s', (_, wire, message) => {
    const c = new Container();
    wire(c);
    const scope = c.createScope();
    const error = thrown(() => scope.resolve(A));
    expect(error).toBeInstanceOf(CaptiveDependencyError);
    expect(error.message).toMatch(message);
    // Nothing half-built was cached: asking again fails the same way.
    expect(() => scope.resolve(A)).toThrow(CaptiveDependencyError);
  });

  it('a scoped service may depend on singletons and transients', () => {
    const c = new Container().scoped(A).singleton(B).transient(C);
    const a = c.createScope().resolve(A);
    expect(a.b).toBe(c.resolve(B));
  });
});

describe('scope disposal', () => {
  function disposables(log: string[]) {
    class AsyncOne {
      async [Symbol.asyncDispose]() {
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push('AsyncOne');
      }
    }
    class SyncOne {
      [Symbol.dispose]() {
        log.push('SyncOne');
      }
    }
    class Plain {
      dispose() {
        log.push('Plain');
      }
    }
    class Broken {
      dispose() {
        log.push('Broken');
        throw new Error('cannot close');
      }
    }
    return { AsyncOne, SyncOne, Plain, Broken };
  }

  it('disposes scoped instances in reverse creation order, one after another, with any of the three disposer forms', async () => {
    const log: string[] = [];
    const { AsyncOne, SyncOne, Plain } = disposables(log);
    class UsesAll {
      constructor(
        readonly a = Inject(AsyncOne),
        readonly s = Inject(SyncOne),
      ) {}
      dispose() {
        log.push('UsesAll');
      }
    }
    const c = new Container().scoped(AsyncOne).scoped(SyncOne).scoped(Plain).scoped(UsesAll);
    const scope = c.createScope();
    scope.resolve(Plain);
    scope.resolve(UsesAll); // creates AsyncOne, SyncOne, then UsesAll
    await scope.dispose();
    expect(log).toEqual(['UsesAll', 'SyncOne', 'AsyncOne', 'Plain']);
  });

  it('a failing disposer is logged and the others still run; dispose is idempotent', async () => {
    const log: string[] = [];
    const { SyncOne, Plain, Broken } = disposables(log);
    const logger = recordingLogger();
    const c = new Container().scoped(SyncOne).scoped(Broken).scoped(Plain);
    const scope = c.createScope({ logger });
    for (const token of [SyncOne, Broken, Plain] as const) scope.resolve<object>(token);
    const first = scope.dispose();
    expect(scope.dispose()).toBe(first);
    await first;
    await scope.dispose();
    expect(log).toEqual(['Plain', 'Broken', 'SyncOne']);
    expect(logger.errors).toHaveLength(1);
    expect(logger.errors[0].msg).toMatch(/^disposing Broken \(scope #\d+\) failed/);
    expect((logger.errors[0].obj as { err: Error }).err.message).toBe('cannot close');
  });

  it('a disposed scope refuses scoped and transient resolutions but still hands out singletons', async () => {
    class Scoped {}
    class Shared {}
    const c = new Container()
      .scoped(Scoped)
      .singleton(Shared)
      .transient('t', { useFactory: () => ({}) });
    const scope = c.createScope();
    scope.resolve(Scoped);
    await scope.dispose();
    expect(scope.disposed).toBe(true);
    expect(thrown(() => scope.resolve(Scoped)).message).toMatch(
      /^Cannot resolve Scoped: its scope was already disposed/,
    );
    expect(() => scope.resolve('t')).toThrow(ScopeDisposedError);
    expect(scope.resolve(Shared)).toBe(c.resolve(Shared));
  });

  it('tracks disposable transients made in the scope, but not those made outside or owned by a singleton', async () => {
    const disposed: string[] = [];
    class Tmp {
      static made = 0;
      readonly id = `tmp${++Tmp.made}`;
      dispose() {
        disposed.push(this.id);
      }
    }
    class Owner {
      constructor(readonly tmp = Inject(Tmp)) {}
    }
    const c = new Container().transient(Tmp).singleton(Owner);
    const outside = c.resolve(Tmp); // tmp1: the caller owns it
    const scope = c.createScope();
    const inside = scope.resolve(Tmp); // tmp2: the scope owns it
    const owned = scope.resolve(Owner).tmp; // tmp3: the singleton owns it
    await scope.dispose();
    expect(disposed).toEqual([inside.id]);
    await c.dispose();
    expect([outside.id, owned.id]).toEqual(['tmp1', 'tmp3']);
    expect(disposed).toEqual([inside.id]); // Owner has no disposer, so its transient is its business
  });

  it('runInScope disposes the scope also when the function throws', async () => {
    const log: string[] = [];
    const { Plain } = disposables(log);
    const c = new Container().scoped(Plain);
    await expect(
      c.runInScope(async (scope) => {
        expect(Inject(Plain)).toBe(scope.resolve(Plain));
        throw new Error('job failed');
      }),
    ).rejects.toThrow('job failed');
    expect(log).toEqual(['Plain']);
  });

  it('scopes of concurrent runs never see each other', async () => {
    class PerRun {}
    const c = new Container().scoped(PerRun);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        c.runInScope(async (scope) => {
          await new Promise((resolve) => setTimeout(resolve, i % 7));
          return Inject(PerRun) === scope.resolve(PerRun) ? Inject(PerRun) : null;
        }),
      ),
    );
    expect(new Set(results).size).toBe(50);
    expect(results).not.toContain(null);
  });
});

describe('container.dispose', () => {
  it('disposes the singletons it built in reverse order, leaves values alone, and builds anew afterwards', async () => {
    const log: string[] = [];
    class Db {
      async [Symbol.asyncDispose]() {
        log.push('Db');
      }
    }
    class Cache {
      constructor(readonly db = Inject(Db)) {}
      dispose() {
        log.push('Cache');
      }
    }
    const value = { dispose: () => log.push('value') };
    const c = new Container().singleton(Db).singleton(Cache).register('value', { useValue: value });
    const cache = c.resolve(Cache);
    c.resolve('value');
    await c.dispose();
    expect(log).toEqual(['Cache', 'Db']);
    expect(c.resolve(Cache)).not.toBe(cache);
    expect(c.resolve('value')).toBe(value);
  });
});
