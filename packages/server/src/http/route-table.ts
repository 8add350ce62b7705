import type { FastifyInstance } from 'fastify';

export interface RouteInfo {
  method: string;
  url: string;
  public: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route the app serves, as registered — what the security tests walk. */
    routeTable: RouteInfo[];
  }
}

/** Record each route as it is added, so tests cover new routes without being told about them. */
export const collectRoutes = (app: FastifyInstance): void => {
  const routes: RouteInfo[] = [];
  app.decorate('routeTable', routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD' || method === 'OPTIONS') continue;
      routes.push({ method, url: route.url, public: route.config?.public === true });
    }
  });
};
