import { activeContainer } from './container.js';
import type { Token } from './token.js';

/**
 * Resolves `token` right now, from the active scope. Meant as a default parameter value, so the
 * dependency is visible in the signature and a test can pass its own:
 *
 * ```ts
 * app.get('/tasks', async (req, reply, tasks = Inject(TaskService)) => tasks.list());
 * class TaskService { constructor(private readonly repo = Inject(TaskRepository)) {} }
 * ```
 *
 * Inside a constructor or factory the container is running, it resolves in that construction's
 * scope; elsewhere in the request scope opened by `ScopedDependencyMiddleware` (or `scope.run`);
 * outside any scope, singletons and transients resolve and a scoped token throws `ScopeRequiredError`.
 */
export function Inject<T>(token: Token<T>): T {
  return activeContainer().resolve(token);
}
