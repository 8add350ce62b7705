import { ServiceError } from '../domain/errors.ts';
import type { Store } from '../ports/store.ts';

/**
 * The store as the HTTP layer sees it, counting every call the backend fails with
 * UNAVAILABLE (the port's contract for "cannot be reached"), by store method. Counting here
 * rather than at the 503 answer keeps load shedding and other non-backend 503s out of the
 * figure, and needs nothing from each backend. A proxy, so methods added to the port later
 * are counted without a change here.
 */
export const countBackendErrors = (store: Store, onError: (operation: string) => void): Store => {
  const isBackendError = (error: unknown): boolean => error instanceof ServiceError && error.code === 'UNAVAILABLE';
  const wrapped = new Map<PropertyKey, unknown>();
  const wrap = (name: string, method: (...args: unknown[]) => unknown) =>
    (...args: unknown[]): unknown => {
      let result: unknown;
      try {
        result = method.apply(store, args);
      } catch (error) {
        if (isBackendError(error)) onError(name);
        throw error;
      }
      if (result instanceof Promise) {
        return result.catch((error: unknown) => {
          if (isBackendError(error)) onError(name);
          throw error;
        });
      }
      return result;
    };
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
      let method = wrapped.get(property);
      if (!method) {
        method = wrap(property, value as (...args: unknown[]) => unknown);
        wrapped.set(property, method);
      }
      return method;
    },
  });
};
